/**
 * Reads the description of an ICC profile (v2 `desc` or v4 `mluc`), enough to tell an sRGB
 * profile from Adobe RGB, Display P3 or a printer profile without a colour-management library.
 */
export function iccDescription(icc: Uint8Array): string | null {
  const view = new DataView(icc.buffer, icc.byteOffset, icc.byteLength);
  if (icc.byteLength < 132) return null;
  const count = view.getUint32(128);
  for (let i = 0; i < count; i++) {
    const entry = 132 + i * 12;
    if (entry + 12 > icc.byteLength) return null;
    if (ascii(icc, entry, 4) !== 'desc') continue;
    const offset = view.getUint32(entry + 4);
    const size = view.getUint32(entry + 8);
    if (offset + size > icc.byteLength || size < 12) return null;
    const type = ascii(icc, offset, 4);
    if (type === 'desc') {
      const length = view.getUint32(offset + 8);
      return ascii(icc, offset + 12, Math.min(length, size - 12)).replace(/\0+$/, '');
    }
    if (type === 'mluc') {
      const records = view.getUint32(offset + 8);
      if (records < 1) return null;
      const length = view.getUint32(offset + 20);
      const start = offset + view.getUint32(offset + 24);
      if (start + length > icc.byteLength) return null;
      let text = '';
      for (let j = 0; j + 1 < length; j += 2)
        text += String.fromCharCode(view.getUint16(start + j));
      return text.replace(/\0+$/, '');
    }
    return null;
  }
  return null;
}

/** True when the profile describes itself as sRGB (IEC 61966-2.1 and its common builds). */
export function isSrgbProfile(icc: Uint8Array): boolean {
  const description = iccDescription(icc);
  return description !== null && /srgb|61966-2/i.test(description);
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  let s = '';
  for (let i = offset; i < offset + length && i < bytes.length; i++) {
    s += String.fromCharCode(bytes[i] ?? 0);
  }
  return s;
}
