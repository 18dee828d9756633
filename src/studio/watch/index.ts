export * from './hot-folder';
export * from './ignore';
export * from './prepare-upload';
export * from './sniff';
export * from './stable-file';
