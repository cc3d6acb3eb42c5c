// Largest-Triangle-Three-Buckets downsampling (docs/decisions/0006-history-downsampling.md): x =
// array position, y = page_count (0 when absent). Keeps the first and last rows and returns exactly
// `target` rows, in their original order and unaltered.

export function lttb<T extends { page_count?: number }>(rows: T[], target: number): T[] {
  const n = rows.length;
  if (target < 3 || n <= target) return rows;
  const y = (i: number) => rows[i].page_count ?? 0;
  const out: T[] = [rows[0]];
  const every = (n - 2) / (target - 2);
  let a = 0; // index of the previously selected point
  for (let i = 0; i < target - 2; i++) {
    // average of the next bucket (the last bucket's "next" is the final point)
    const nextStart = Math.floor((i + 1) * every) + 1;
    const nextEnd = Math.min(Math.floor((i + 2) * every) + 1, n);
    let avgX = 0;
    let avgY = 0;
    const nextLen = Math.max(nextEnd - nextStart, 0);
    if (nextLen === 0) {
      avgX = n - 1;
      avgY = y(n - 1);
    } else {
      for (let j = nextStart; j < nextEnd; j++) {
        avgX += j;
        avgY += y(j);
      }
      avgX /= nextLen;
      avgY /= nextLen;
    }
    const start = Math.floor(i * every) + 1;
    const end = Math.floor((i + 1) * every) + 1;
    let best = start;
    let bestArea = -1;
    const ay = y(a);
    for (let j = start; j < end; j++) {
      const area = Math.abs((a - avgX) * (y(j) - ay) - (a - j) * (avgY - ay));
      if (area > bestArea) {
        bestArea = area;
        best = j;
      }
    }
    out.push(rows[best]);
    a = best;
  }
  out.push(rows[n - 1]);
  return out;
}
