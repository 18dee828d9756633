/**
 * sharp, set up once for every process that decodes images (the core's local provider, the
 * studio's library, hot folders and export): import it from here, not from 'sharp'.
 */
import sharp from 'sharp';

// No open-file cache (Immich's habit): a cached handle keeps a photo busy after it was moved to
// done/ or deleted, which Windows refuses and which hides the file's real state elsewhere.
sharp.cache({ files: 0 });

export { sharp };
