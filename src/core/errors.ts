/**
 * Typed domain errors. The core throws these; only the edges (HTTP, in-process client) turn them
 * into `{status, body}`. Each carries the status the spec assigns to its condition.
 */
export class ServiceError extends Error {
  constructor(
    readonly status: 400 | 401 | 402 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class BadRequest extends ServiceError {
  constructor(message: string) {
    super(400, message);
  }
}
export class Unauthorized extends ServiceError {
  constructor(message = 'Missing, malformed, invalid or revoked API key') {
    super(401, message);
  }
}
export class InsufficientDiamonds extends ServiceError {
  constructor(
    readonly required: number,
    readonly balance: number,
  ) {
    super(402, `Insufficient diamonds: ${required} required, balance is ${balance}`);
  }
}
export class NotFound extends ServiceError {
  constructor(message: string) {
    super(404, message);
  }
}
export class Conflict extends ServiceError {
  constructor(message: string) {
    super(409, message);
  }
}
export class PayloadTooLarge extends ServiceError {
  constructor(message: string) {
    super(413, message);
  }
}
export class UnsupportedMediaType extends ServiceError {
  constructor(message = 'Unsupported image format: only JPEG, PNG and WebP are accepted') {
    super(415, message);
  }
}
export class DailyCapReached extends ServiceError {
  constructor(readonly cap: number) {
    super(
      429,
      `Daily request cap of ${cap} requests reached for this API key (resets at 00:00 UTC)`,
    );
  }
}
/**
 * Uploaded and fetched images an account keeps are bounded (server mode); past the bound a new
 * one is refused with 413 and nothing is charged. Not in the spec, which leaves storage unstated.
 */
export class StorageLimitReached extends ServiceError {
  constructor(held: number, added: number, limit: number) {
    const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
    super(
      413,
      `Storage limit reached: this account keeps ${mb(held)} of uploaded and fetched images, ${mb(added)} more would pass its ${mb(limit)} limit; nothing was charged`,
    );
  }
}
/** The spec's "failure after the deduction": the job is failed and the charge refunded. */
export class FailedAfterCharge extends ServiceError {
  constructor(message: string) {
    super(500, message);
  }
}
/**
 * The service cannot answer for now (its database went away); the message says what became of the
 * request, and promises nothing was charged only where that is known.
 */
export class ServiceUnavailable extends ServiceError {
  constructor(message: string) {
    super(503, message);
  }
}
/** Account/key administration failures (CLI), not part of the /v1 surface. */
export class AdminError extends Error {
  override name = 'AdminError';
}
