/**
 * The core's local background removal, for work the studio does itself whatever service made the
 * photo: an Amazon export needs the product apart from its backdrop. Image processing only
 * (sharp, no SQLite), loaded when first needed, so an engine that never exports to a white
 * background never loads it.
 */
export async function cutOutLocally(photo: Buffer): Promise<Buffer> {
  const { removeBackground } = await import('../core/providers/local/remove-background');
  return removeBackground(photo);
}
