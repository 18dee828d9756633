import type Database from 'better-sqlite3';

/** Handles are typed by what they allow; both are the same connection at run time. */
export type WritableDB = Database.Database & { readonly __writable: unique symbol };
export type ReadableDB = Pick<Database.Database, 'prepare'> & { readonly __readable?: never };
