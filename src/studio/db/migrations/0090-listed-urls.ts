import type Database from 'better-sqlite3';

/**
 * Every result URL a job's answers have listed, in the order first seen (JSON). A catalog job's
 * `resultUrls` "fills in as shots complete" (spec 2.3), and a service may list each shot's URL in
 * the answer where it completes only, its final answer listing none (review rev15 C2): the URLs
 * are kept from every poll, so a restart keeps them, and collected at the end. NULL: none seen.
 */
export function up(db: Database.Database): void {
  db.exec(`ALTER TABLE items ADD COLUMN listed_urls TEXT;`);
}
