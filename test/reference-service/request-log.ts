/**
 * Every request the service saw (admin routes aside), with what a money check needs: whether it
 * carried an Idempotency-Key or an Authorization header, and the status answered (null: the
 * connection closed before an answer). In memory only.
 */
import type http from 'node:http';

export type LoggedRequest = {
  at: number;
  method: string;
  /** Path and query as sent. */
  path: string;
  /** 'api': /v1 endpoints; 'upload': an uploaded file fetched; 'result': a result download. */
  kind: 'api' | 'upload' | 'result' | 'other';
  idempotencyKey: string | null;
  authorization: boolean;
  status: number | null;
};

export class RequestLog {
  readonly entries: LoggedRequest[] = [];

  /** Logs the request once its answer is finished (or its connection closed). */
  watch(req: http.IncomingMessage, res: http.ServerResponse, kind: LoggedRequest['kind']): void {
    const key = req.headers['idempotency-key'];
    const entry: LoggedRequest = {
      at: Date.now(),
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      kind,
      idempotencyKey: typeof key === 'string' ? key : null,
      authorization: req.headers.authorization !== undefined,
      status: null,
    };
    this.entries.push(entry);
    res.once('close', () => {
      entry.status = res.writableFinished ? res.statusCode : null;
    });
  }
}
