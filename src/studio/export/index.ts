export * from './compliance';
export * from './export-result';
export * from './naming';
export * from './presets';
export * from './render';
export * from './source-files';
