/**
 * The reference service as its own process, for harnesses that kill and restart it:
 *   node --import tsx test/reference-service/main.ts --port 0 [--results-port 0] [--state FILE]
 *        [--options JSON] [--admin-token TOKEN]
 * Prints {"listening": URL, "results": URL} on stdout when ready. Admin routes live under
 * /_ref/ (header x-ref-token: TOKEN). SIGTERM/SIGINT close it cleanly; kill -9 loses nothing
 * written before an answer went out (state is written through).
 */
import { parseArgs } from 'node:util';
import { startReferenceService } from './index';
import { ReferenceServiceOptionsSchema } from './options';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'results-port': { type: 'string', default: '0' },
    state: { type: 'string' },
    options: { type: 'string', default: '{}' },
    'admin-token': { type: 'string' },
  },
  strict: true,
});
const options = ReferenceServiceOptionsSchema.parse({
  ...(JSON.parse(values.options) as object),
  ...(values.state ? { statePath: values.state } : {}),
});
const service = await startReferenceService(options, {
  port: Number(values.port),
  resultsPort: Number(values['results-port']),
  ...(values['admin-token'] ? { adminToken: values['admin-token'] } : {}),
});
process.stdout.write(
  `${JSON.stringify({ listening: service.url, results: service.resultsUrl })}\n`,
);
const stop = () => {
  void service.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
