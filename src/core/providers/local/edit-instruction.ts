/**
 * Reads a photo_edit instruction into the edits the offline renderer can really perform. The
 * instruction is cut into clauses ("make the background light grey and brighten it a bit"); every
 * clause must name something performable, so a paid job never silently ignores part of a request.
 */
import { z } from 'zod';

const RgbSchema = z.tuple([
  z.number().int().min(0).max(255),
  z.number().int().min(0).max(255),
  z.number().int().min(0).max(255),
]);
export type Rgb = z.infer<typeof RgbSchema>;

export const EditSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('background'), colour: RgbSchema }),
  z.object({ kind: z.literal('remove-background') }),
  /** Multiplies the backdrop's brightness only (the subject is kept). */
  z.object({ kind: z.literal('background-brightness'), factor: z.number().positive() }),
  z.object({ kind: z.literal('recolour'), colour: RgbSchema }),
  z.object({ kind: z.literal('brightness'), factor: z.number().positive() }),
  z.object({ kind: z.literal('contrast'), factor: z.number().positive() }),
  z.object({ kind: z.literal('saturation'), factor: z.number().positive() }),
  z.object({ kind: z.literal('temperature'), warmer: z.boolean() }),
  z.object({ kind: z.literal('monochrome') }),
  z.object({ kind: z.literal('sharpen') }),
  /** Crop to a width/height ratio around the product; null: tight around the product. */
  z.object({ kind: z.literal('crop'), ratio: z.number().positive().nullable() }),
]);
export type Edit = z.infer<typeof EditSchema>;

export type ParsedInstruction = { edits: Edit[]; unsupported: string[] };

/** What the offline renderer can do, in the words of its failure message. */
export const OFFLINE_EDITS =
  'change the background colour (white, grey, light grey, a named or #hex colour) or remove it, ' +
  'brighten or darken the photo or the background, recolour the garment, crop to a ratio (1:1, 4:5...) ' +
  'or around the product, warmer or cooler, black and white, more or less vivid, more contrast, sharpen';

const NAMED: Record<string, Rgb> = {
  white: [255, 255, 255],
  'off white': [245, 244, 240],
  offwhite: [245, 244, 240],
  ivory: [255, 255, 240],
  cream: [245, 239, 224],
  grey: [160, 160, 160],
  gray: [160, 160, 160],
  'light grey': [211, 211, 211],
  'light gray': [211, 211, 211],
  'pale grey': [225, 225, 225],
  'pale gray': [225, 225, 225],
  'dark grey': [85, 85, 85],
  'dark gray': [85, 85, 85],
  silver: [192, 192, 192],
  charcoal: [54, 69, 79],
  black: [17, 17, 17],
  red: [192, 57, 43],
  burgundy: [128, 0, 32],
  maroon: [128, 0, 0],
  pink: [242, 184, 198],
  'hot pink': [255, 105, 180],
  orange: [230, 126, 34],
  coral: [255, 127, 80],
  peach: [255, 203, 164],
  yellow: [241, 211, 107],
  mustard: [225, 173, 1],
  gold: [212, 175, 55],
  beige: [232, 220, 196],
  tan: [210, 180, 140],
  brown: [121, 85, 61],
  camel: [193, 154, 107],
  khaki: [195, 176, 145],
  olive: [107, 112, 54],
  green: [78, 143, 74],
  'forest green': [34, 139, 34],
  mint: [170, 240, 209],
  sage: [178, 172, 136],
  teal: [0, 128, 128],
  turquoise: [64, 224, 208],
  cyan: [0, 200, 220],
  blue: [63, 111, 181],
  'light blue': [173, 216, 230],
  'sky blue': [135, 206, 235],
  'baby blue': [137, 207, 240],
  'royal blue': [65, 105, 225],
  navy: [31, 45, 77],
  'navy blue': [31, 45, 77],
  'dark blue': [25, 45, 110],
  purple: [128, 64, 160],
  lavender: [200, 180, 230],
  lilac: [200, 162, 200],
  violet: [143, 0, 255],
  magenta: [255, 0, 255],
};
// Longest names first, so "light grey" wins over "grey" and "navy blue" over "blue".
const NAMES = Object.keys(NAMED).sort((a, b) => b.length - a.length);

/** A colour named in `text` (hex, rgb(), a name with an optional light/pale/dark), or null. */
export function colourIn(text: string): Rgb | null {
  const hex = /#([0-9a-f]{6}|[0-9a-f]{3})\b/.exec(text);
  if (hex) {
    const h = hex[1]!.length === 3 ? [...hex[1]!].map((c) => c + c).join('') : hex[1]!;
    return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as Rgb;
  }
  const rgb = /rgb\s*\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)/.exec(text);
  if (rgb) return [1, 2, 3].map((i) => Math.min(255, Number(rgb[i]))) as Rgb;
  for (const name of NAMES) {
    const at = new RegExp(`(?:\\b(light|pale|dark|deep)\\s+)?\\b${name}\\b`).exec(text);
    if (!at) continue;
    const base = NAMED[name]!;
    const shade = at[1];
    if (!shade || name.includes(' ')) return base;
    const toward = shade === 'light' || shade === 'pale' ? 255 : 0;
    const k = shade === 'pale' ? 0.6 : shade === 'light' ? 0.45 : 0.4;
    return base.map((c) => Math.round(c + (toward - c) * k)) as Rgb;
  }
  return null;
}

/** How strongly: "slightly" / "a bit" less, "much" / "a lot" more. */
function amount(clause: string, normal: number): number {
  if (/\b(slightly|a (little )?bit|a little|subtly|a touch|somewhat)\b/.test(clause))
    return 1 + (normal - 1) / 2;
  if (/\b(much|a lot|very|way|significantly|strongly|really)\b/.test(clause))
    return 1 + (normal - 1) * 2;
  return normal;
}

const BACKGROUND = /\b(back\s?ground|backdrop|bg|back\s?drop)\b/;
const GARMENT =
  /\b(shirt|t-?shirt|tee|top|blouse|dress|skirt|trousers|pants|jeans|shorts|jacket|coat|sweater|jumper|hoodie|cardigan|garment|product|item|clothing|fabric|cloth|it|piece)\b/;
const FILLER = new Set([
  'please',
  'thanks',
  'thank',
  'you',
  'kindly',
  'just',
  'ok',
  'okay',
  'the',
  'a',
  'an',
  'it',
  'and',
  'also',
  'me',
  'for',
  'photo',
  'image',
  'picture',
  'pic',
]);

function ratioIn(clause: string): number | null | undefined {
  if (/\bsquare\b/.test(clause)) return 1;
  const r = /\b(\d{1,2}(?:\.\d+)?)\s*[:x×/]\s*(\d{1,2}(?:\.\d+)?)\b/.exec(clause);
  if (r && Number(r[1]) > 0 && Number(r[2]) > 0) return Number(r[1]) / Number(r[2]);
  if (/\bcrop\b|\btrim\b|\bzoom in\b|\btighter\b/.test(clause)) return null;
  return undefined;
}

/** The edits one clause asks for; an empty list means the clause is not performable offline. */
function clauseEdits(clause: string): Edit[] {
  const edits: Edit[] = [];
  const colour = colourIn(clause);
  if (BACKGROUND.test(clause)) {
    if (
      /\b(remove|transparent|delete|erase|get rid|cut\s?out)\b|\bno\s+(back\s?ground|backdrop|bg)\b/.test(
        clause,
      )
    )
      return [{ kind: 'remove-background' }];
    if (colour) return [{ kind: 'background', colour }];
    if (/\b(brighten|brighter|lighten|lighter)\b/.test(clause))
      return [{ kind: 'background-brightness', factor: amount(clause, 1.15) }];
    if (/\b(darken|darker|dim)\b/.test(clause))
      return [{ kind: 'background-brightness', factor: 1 / amount(clause, 1.2) }];
    return [];
  }
  const ratio = ratioIn(clause);
  if (ratio !== undefined) edits.push({ kind: 'crop', ratio });
  if (/\b(black\s*(and|&)\s*white|monochrome|gr[ae]yscale|b\s*&\s*w|b\/w)\b/.test(clause)) {
    edits.push({ kind: 'monochrome' });
  } else if (
    colour &&
    (GARMENT.test(clause) || /\b(recolou?r|colou?r|dye|turn|change|make)\b/.test(clause))
  ) {
    edits.push({ kind: 'recolour', colour });
  }
  if (/\b(warm(er)?|warmth)\b/.test(clause)) edits.push({ kind: 'temperature', warmer: true });
  if (/\b(cool(er)?|cold(er)?)\b/.test(clause)) edits.push({ kind: 'temperature', warmer: false });
  if (
    /\b(brighten|brighter|lighten|lighter|lift|more light|exposure up|increase (the )?(brightness|exposure)|brightness up)\b/.test(
      clause,
    )
  ) {
    edits.push({ kind: 'brightness', factor: amount(clause, 1.15) });
  } else if (
    /\b(darken|darker|dim|moody|less bright|reduce (the )?(brightness|exposure)|brightness down|exposure down)\b/.test(
      clause,
    )
  ) {
    edits.push({ kind: 'brightness', factor: 1 / amount(clause, 1.2) });
  }
  if (
    /\b(more contrast|contrast(y)?|punchier)\b/.test(clause) &&
    !/\bless contrast|lower contrast\b/.test(clause)
  ) {
    edits.push({ kind: 'contrast', factor: amount(clause, 1.15) });
  } else if (/\b(less contrast|lower contrast|flatter)\b/.test(clause))
    edits.push({ kind: 'contrast', factor: 1 / amount(clause, 1.15) });
  if (
    /\b(vivid|saturat\w*|vibrant|pop|more colou?rful)\b/.test(clause) &&
    !/\bdesaturat/.test(clause)
  ) {
    edits.push({ kind: 'saturation', factor: amount(clause, 1.35) });
  } else if (/\b(muted|desaturat\w*|faded|less colou?rful|less saturated)\b/.test(clause)) {
    edits.push({ kind: 'saturation', factor: 1 / amount(clause, 1.5) });
  }
  if (/\b(sharpen|sharper|crisper|crisp)\b/.test(clause)) edits.push({ kind: 'sharpen' });
  return edits;
}

/** Only words that carry no request ("please", "thanks", emoji). */
function isFiller(clause: string): boolean {
  const words = clause.match(/\p{L}[\p{L}'-]*/gu) ?? [];
  return words.every((w) => FILLER.has(w));
}

export function parseInstruction(instruction: string): ParsedInstruction {
  const text = instruction
    .toLowerCase()
    .replace(/\bblack\s*(and|&)\s*white\b/g, 'monochrome')
    .replace(/\bcolor\b/g, 'colour');
  const clauses = text
    .split(/[,;!?\n]|\.(?=\s|$)|\s[-–—]\s|\band\b|\bthen\b|\balso\b|&|\+/)
    .map((c) => c.trim())
    .filter((c) => c.length > 0 && !isFiller(c));
  const edits: Edit[] = [];
  const unsupported: string[] = [];
  for (const clause of clauses) {
    const found = clauseEdits(clause);
    if (found.length === 0) unsupported.push(clause);
    edits.push(...found);
  }
  return { edits, unsupported };
}
