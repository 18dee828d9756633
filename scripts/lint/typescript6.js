// typescript-eslint reads TypeScript's classic compiler API, which TypeScript 7 (our `tsc`, the
// native compiler) no longer ships; it refuses to load on TS 7. In the lint process only, the
// name `typescript` is answered by TypeScript 6 (@typescript/typescript6, same language, classic
// API). Remove this file once typescript-eslint supports TS 7 (typescript-eslint issue 10940).
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'typescript' || specifier.startsWith('typescript/')) {
      return nextResolve(specifier.replace(/^typescript/, '@typescript/typescript6'), context);
    }
    return nextResolve(specifier, context);
  },
});
