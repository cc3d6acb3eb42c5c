// Test helper: waits for progress instead of a fixed time. `probe` is asked every 150 ms until it
// gives a value (anything but undefined or false), which is returned; `ms` is only a guard against
// a wait that would never end, and its error names what was awaited.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(150);
  }
}
