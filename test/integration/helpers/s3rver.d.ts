// s3rver ships no types; only what the tests use, from its README.
declare module 's3rver' {
  type Options = {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string }[];
    resetOnClose?: boolean;
  };
  /** One object as s3rver's filesystem store takes it (lib/stores/filesystem.js). */
  type StoredObject = {
    bucket: string;
    key: string;
    metadata: Record<string, string>;
    content: Buffer | NodeJS.ReadableStream;
  };
  type FilesystemStore = {
    getResourcePath(bucket: string, key: string, resource: 'object'): string;
    putMetadata(
      bucket: string,
      key: string,
      metadata: Record<string, string>,
      md5: string,
    ): Promise<void>;
    putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  };
  export default class S3rver {
    constructor(options: Options);
    store: FilesystemStore;
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
