export * from '../shared/generation-rules';
