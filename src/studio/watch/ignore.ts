import { DONE_DIR, FAILED_DIR } from '../export/source-files';

/**
 * Names a hot folder never treats as photos: system litter, partial downloads and copies in
 * progress, and the app's own output folders.
 *
 * `done/` and `failed/` are ignored only at the top level of the hot folder: that is where the
 * app moves sources (mirroring subfolders inside them), and a client's own subfolder that
 * happens to be called `done` deeper down is real content.
 */
const IGNORED_FILE_PATTERNS: readonly RegExp[] = [
  /^\./, // hidden files and folders: .DS_Store, ._resource forks, .git, our own .tmp files
  /^thumbs\.db$/i,
  /^desktop\.ini$/i,
  /^~\$/, // Office lock files
  /\.(part|crdownload|download|tmp|temp|partial)$/i, // browsers, FTP and SMB clients mid-copy
  /\.reason\.txt$/i, // our failure notes, if a user drags one back
];

const APP_FOLDERS = new Set([DONE_DIR, FAILED_DIR]);

/**
 * True when a path (relative to the hot folder, `/` or `\` separated) must be ignored: any of
 * its segments matches the rules, or it is inside the top-level `done/` or `failed/`.
 * The second argument is accepted for callers walking a tree; files and folders share the rules.
 */
export function isIgnored(relativePath: string, _isDirectory?: boolean): boolean {
  const segments = relativePath.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) return false; // the hot folder itself
  const first = segments[0] ?? '';
  if (APP_FOLDERS.has(first.toLowerCase())) return true;
  return segments.some((segment) => IGNORED_FILE_PATTERNS.some((re) => re.test(segment)));
}
