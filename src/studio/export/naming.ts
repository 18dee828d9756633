import { z } from 'zod';
import { NAMING_TOKENS } from '../../shared/studio';

/**
 * Export naming patterns: literal text plus `{token}`s, rendered to a relative path with `/` as
 * the only separator. The output extension is always appended; a trailing `.{ext}` in the
 * pattern is accepted and not doubled.
 */
export { NAMING_TOKENS };
export type NamingToken = (typeof NAMING_TOKENS)[number];

export const DEFAULT_NAMING_PATTERN = '{name}-{tool}-{n}';

/** The values one export fills the tokens with. */
export const NamingValuesSchema = z.object({
  /** Source file name; its extension is dropped (`look-042.jpg` -> `look-042`). */
  name: z.string(),
  /** Source subfolder relative to the hot folder, `''` at top level; `/` or `\` separated. */
  folder: z.string().default(''),
  tool: z.string(),
  /** Shot id, or its index in a ready shoot. */
  shot: z.union([z.string(), z.number().int().nonnegative()]),
  /** 1-based result number. */
  n: z.number().int().positive(),
  /** A Date (formatted in local time) or an already formatted `YYYY-MM-DD`. */
  date: z.union([z.date(), z.string().regex(/^\d{4}-\d{2}-\d{2}$/)]),
  /** Output extension without the dot (`jpg`, `png`, `webp`). */
  ext: z.string().regex(/^[a-z0-9]{1,8}$/i),
});
export type NamingValues = z.input<typeof NamingValuesSchema>;

export class NamingPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NamingPatternError';
  }
}

type Part = { kind: 'text'; text: string } | { kind: 'token'; token: NamingToken };

// Illegal in a file name on Windows (the strictest of the three); `/` is our separator.
const ILLEGAL_CHARS = /[<>:"\\|?*\u0000-\u001f\u007f]/;
const ILLEGAL_CHARS_GLOBAL = /[<>:"/\\|?*\u0000-\u001f\u007f]/g;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;
const MAX_SEGMENT_BYTES = 200; // below the 255-byte limit, leaving room for "-999.webp" and temp names

/** Parses and validates a pattern; throws NamingPatternError with a message fit for the UI. */
export function parsePattern(pattern: string): Part[] {
  if (pattern.trim() === '') throw new NamingPatternError('The naming pattern is empty');
  const parts: Part[] = [];
  const re = /\{([^{}]*)\}|([{}])|([^{}]+)/g;
  for (const m of pattern.matchAll(re)) {
    const [, token, brace, text] = m;
    if (brace !== undefined) {
      throw new NamingPatternError(`Unbalanced "${brace}" at position ${m.index + 1}`);
    }
    if (token !== undefined) {
      if (!(NAMING_TOKENS as readonly string[]).includes(token)) {
        throw new NamingPatternError(
          `Unknown token {${token}}; use ${NAMING_TOKENS.map((t) => `{${t}}`).join(', ')}`,
        );
      }
      parts.push({ kind: 'token', token: token as NamingToken });
    } else if (text !== undefined) {
      const bad = ILLEGAL_CHARS.exec(text);
      if (bad) {
        const shown = bad[0] === '\\' ? '\\ (use / for folders)' : JSON.stringify(bad[0]);
        throw new NamingPatternError(`The character ${shown} is not allowed in file names`);
      }
      parts.push({ kind: 'text', text });
    }
  }
  if (!parts.some((p) => p.kind === 'token' && p.token !== 'ext' && p.token !== 'date')) {
    // A constant name would make every export of a batch collide into name-2, name-3...
    throw new NamingPatternError('The pattern needs at least one of {name}, {tool}, {shot}, {n}');
  }
  if (pattern.startsWith('/')) throw new NamingPatternError('The pattern must be a relative path');
  for (const segment of literalSkeleton(parts).split('/')) {
    if (segment === '..' || segment === '.') {
      throw new NamingPatternError('"." and ".." folders are not allowed in the pattern');
    }
  }
  return parts;
}

/** `{ ok }` form of parsePattern for forms and previews. */
export function validatePattern(pattern: string): { ok: true } | { ok: false; error: string } {
  try {
    parsePattern(pattern);
    return { ok: true };
  } catch (error) {
    if (error instanceof NamingPatternError) return { ok: false, error: error.message };
    throw error;
  }
}

/** Zod schema for a stored pattern: same rules as parsePattern. */
export const NamingPatternSchema = z
  .string()
  .max(200)
  .superRefine((pattern, ctx) => {
    const result = validatePattern(pattern);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.error });
  });

/**
 * Renders a pattern to a relative path (`/`-separated, extension included). Token values are
 * sanitised, so no value can escape the output folder or produce an illegal name.
 */
export function renderName(pattern: string, values: NamingValues): string {
  // `photo.{ext}` is accepted; the extension is appended below, so drop it here.
  const parts = parsePattern(
    pattern.endsWith('.{ext}') ? pattern.slice(0, -'.{ext}'.length) : pattern,
  );
  const v = NamingValuesSchema.parse(values);
  const ext = v.ext.toLowerCase();
  const tokenValue = (token: NamingToken): string => {
    switch (token) {
      case 'name':
        return sanitiseValue(stripExtension(v.name));
      case 'folder':
        // Keeps the subfolder structure: each segment sanitised, "." and ".." dropped.
        return v.folder
          .split(/[\\/]+/)
          .map((s) => sanitiseValue(s))
          .filter((s) => s !== '' && s !== '.' && s !== '..')
          .join('/');
      case 'tool':
        return sanitiseValue(v.tool);
      case 'shot':
        return sanitiseValue(String(v.shot));
      case 'n':
        return String(v.n);
      case 'date':
        return typeof v.date === 'string' ? v.date : formatLocalDate(v.date);
      case 'ext':
        return ext;
    }
  };
  const rendered = parts.map((p) => (p.kind === 'text' ? p.text : tokenValue(p.token))).join('');
  const segments = rendered
    .split('/')
    .map((s) => cleanSegment(s))
    .filter((s) => s !== '');
  const file = segments.pop();
  if (file === undefined) {
    throw new NamingPatternError(`The pattern "${pattern}" renders to an empty name`);
  }
  return [...segments, `${file}.${ext}`].join('/');
}

/** Live preview for the UI: the names the pattern gives for sample values, or why it is invalid. */
export function previewNames(
  pattern: string,
  samples: readonly NamingValues[],
): { ok: true; names: string[] } | { ok: false; error: string } {
  const valid = validatePattern(pattern);
  if (!valid.ok) return valid;
  try {
    return { ok: true, names: samples.map((s) => renderName(pattern, s)) };
  } catch (error) {
    if (error instanceof NamingPatternError) return { ok: false, error: error.message };
    throw error;
  }
}

/** `YYYY-MM-DD` in local time: studios name files by the day they work, not by UTC. */
export function formatLocalDate(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

export function stripExtension(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

function sanitiseValue(value: string): string {
  return value.normalize('NFC').replace(ILLEGAL_CHARS_GLOBAL, '_').trim();
}

/** Final per-segment rules: no leading dots (hidden, or traversal), no trailing dots/spaces
 * (Windows drops them), no reserved device names, bounded length. */
function cleanSegment(segment: string): string {
  let s = segment.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
  if (WINDOWS_RESERVED.test(s)) s = `${s}_`;
  while (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) s = s.slice(0, -1);
  return s;
}

function literalSkeleton(parts: Part[]): string {
  return parts.map((p) => (p.kind === 'text' ? p.text : 'x')).join('');
}
