/** A command refused for a reason the caller can act on; crosses every transport as `{ code, message }`. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}
