import type { default as sharpModule, Metadata, SharpOptions } from 'sharp';
import { lazyRequire } from '../../lib/lazy.js';
import { hasMetadata, isLosslessWebp, type ImageFormat } from './images.bytes.js';

/**
 * An uploaded image made fit for email (docs/images.md, "What happens to an upload"), with sharp (libvips). sharp is a
 * native package of ~10 MB of code: it loads with the first upload, not when the process starts (lib/lazy.ts), and
 * keeps no cache (each upload is processed once), so a server that never receives an image pays nothing for it.
 */
let loaded: typeof sharpModule | undefined;
const load = lazyRequire<typeof sharpModule>('sharp');
function sharp(): typeof sharpModule {
  if (!loaded) {
    loaded = load();
    loaded.cache(false);
  }
  return loaded;
}

/** Wider than this (twice a 600 px email column, for high-density screens) is resized to it. */
export const MAX_WIDTH = 1200;
/** Pixels of one frame: more is refused before anything is decoded (a small file can declare a huge image). */
export const MAX_PIXELS = 50_000_000;

const JPEG_QUALITY = 85;
const WEBP_QUALITY = 85;

export interface ProcessedImage {
  data: Buffer;
  width: number;
  height: number;
  /** What was done: nothing (the bytes as uploaded), or the image re-encoded (resized, turned upright, metadata removed). */
  changed: boolean;
}

/** Why an image was not processed: the refusal's sentence. */
export class ImageRefused extends Error {
  constructor(
    readonly reason: 'unreadable' | 'too_many_pixels',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Decodes the whole image (a truncated or corrupt one is refused: `unreadable`) and returns what to store:
 * - an animated GIF as it was uploaded (re-encoding animations loses quality and often grows them);
 * - otherwise the image turned upright by its EXIF orientation, resized to MAX_WIDTH when wider, and re-encoded in its
 *   own format without metadata (sharp keeps none unless asked), when any of the three applies;
 * - else the bytes as uploaded, which are then already upright, small enough and free of metadata.
 */
export async function processImage(buf: Buffer, format: ImageFormat): Promise<ProcessedImage> {
  const s = sharp();
  const input = { failOn: 'error', limitInputPixels: false } as const;
  let meta: Metadata;
  try {
    meta = await s(buf, input).metadata();
  } catch (err) {
    throw unreadable(err);
  }
  if (meta.format !== format) throw new ImageRefused('unreadable', `the file cannot be read as ${format}`);
  const pages = meta.pages ?? 1;
  const frameHeight = meta.pageHeight ?? meta.height;
  if (meta.width * frameHeight > MAX_PIXELS)
    throw new ImageRefused(
      'too_many_pixels',
      `the image is ${meta.width}×${frameHeight} pixels; at most ${MAX_PIXELS / 1_000_000} megapixels are accepted`,
    );
  const animated = pages > 1;
  const limitInputPixels = MAX_PIXELS * pages;

  if (animated && format === 'gif') {
    await decodeAll(buf, { ...input, animated: true, limitInputPixels });
    return { data: buf, width: meta.width, height: frameHeight, changed: false };
  }

  const orientation = meta.orientation ?? 1;
  const upright = animated ? { width: meta.width, height: frameHeight } : meta.autoOrient;
  const resize = upright.width > MAX_WIDTH;
  if (orientation === 1 && !resize && !hasMetadata(buf, format)) {
    await decodeAll(buf, { ...input, animated, limitInputPixels });
    return { data: buf, width: upright.width, height: upright.height, changed: false };
  }

  try {
    let pipeline = s(buf, { ...input, animated, limitInputPixels, autoOrient: true });
    if (resize) pipeline = pipeline.resize({ width: MAX_WIDTH, withoutEnlargement: true });
    switch (format) {
      case 'png':
        pipeline = pipeline.png({ compressionLevel: 9, palette: meta.isPalette });
        break;
      case 'jpeg':
        pipeline = pipeline.jpeg({ quality: JPEG_QUALITY });
        break;
      case 'webp':
        pipeline = pipeline.webp(isLosslessWebp(buf) ? { lossless: true } : { quality: WEBP_QUALITY });
        break;
      case 'gif':
        pipeline = pipeline.gif({ reuse: true });
        break;
    }
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.pageHeight ?? info.height, changed: true };
  } catch (err) {
    throw unreadable(err);
  }
}

/** Reads every pixel (libvips streams it: memory stays small), so that a truncated or corrupt image is refused. */
async function decodeAll(buf: Buffer, options: SharpOptions): Promise<void> {
  try {
    await sharp()(buf, options).stats();
  } catch (err) {
    throw unreadable(err);
  }
}

function unreadable(err: unknown): ImageRefused {
  if (err instanceof ImageRefused) return err;
  const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
  return new ImageRefused('unreadable', `the image cannot be read (truncated or corrupt: ${why})`);
}
