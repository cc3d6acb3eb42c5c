// What a thrown value says, as one line of text for a log field, a status line or an API body.
// Every part of the agent turns errors into text here, so that a value thrown that is not an Error
// (a string, an object with a message) reads the same everywhere.

/** The error's message; for a value without one (or an empty one), the value as a string. */
export function errorText(err: unknown): string {
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : String(err);
}
