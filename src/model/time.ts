// Timestamps: stored as epoch milliseconds (UTC), emitted as RFC 3339 in UTC
// (docs/decisions/0002-time.md).

/** RFC 3339 in UTC with `Z`; fractional seconds only when non-zero, trailing zeros trimmed. */
export function formatTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-03-01T10:00:00.500Z (years beyond 9999: +012026-...)
  // Slicing, not a regex: history answers format hundreds of timestamps per request.
  const dot = iso.length - 5;
  if (iso.endsWith('000Z')) return iso.slice(0, dot) + 'Z';
  if (iso.endsWith('00Z')) return iso.slice(0, dot + 2) + 'Z';
  if (iso.endsWith('0Z')) return iso.slice(0, dot + 3) + 'Z';
  return iso;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Strict RFC 3339: upper-case `T` and `Z`, a zone is required, fractional seconds allowed
 * (kept to the millisecond). Returns epoch ms, or null when the text is not RFC 3339.
 */
export function parseTime(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[8].slice(1, 3));
    const om = Number(m[8].slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const millis = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, millis);
  return d.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
