/**
 * What a file is, read from its bytes (docs/images.md): the four formats an email may carry (PNG, JPEG, GIF, WebP),
 * what else it looks like when it is none of them (to say so), and whether it carries metadata that must not be
 * published (EXIF with its GPS position, XMP, IPTC, comments, text chunks). Only the bytes decide (contract §16); a
 * name or a declared type only words a refusal (images.service.ts).
 */

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export const CONTENT_TYPES: Record<ImageFormat, 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The extension of an image's public URL (`/i/{id}.{ext}`). */
export const EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp' };

/** How a format is named to a person. */
export const FORMAT_NAMES: Record<string, string> = {
  png: 'PNG',
  jpeg: 'JPEG',
  gif: 'GIF',
  webp: 'WebP',
  svg: 'SVG',
  pdf: 'PDF',
  heic: 'HEIC',
  avif: 'AVIF',
  tiff: 'TIFF',
  bmp: 'BMP',
  ico: 'ICO',
  text: 'text',
  zip: 'ZIP',
  gzip: 'gzip',
  html: 'HTML',
};

const ascii = (buf: Uint8Array, at: number, length: number) =>
  String.fromCharCode(...buf.subarray(at, Math.min(at + length, buf.length)));

/** The image format of the bytes, or null when they are not one of the four. */
export function imageFormatOf(buf: Uint8Array): ImageFormat | null {
  if (buf.length >= 8 && ascii(buf, 0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'jpeg';
  if (buf.length >= 6 && (ascii(buf, 0, 6) === 'GIF87a' || ascii(buf, 0, 6) === 'GIF89a')) return 'gif';
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'RIFF' && ascii(buf, 8, 4) === 'WEBP') return 'webp';
  return null;
}

/**
 * What bytes that are not one of the four formats look like, as a key of FORMAT_NAMES, or null when unknown. Only to
 * word the refusal: nothing here is ever decoded.
 */
export function otherFormatOf(buf: Uint8Array): string | null {
  if (ascii(buf, 0, 5) === '%PDF-') return 'pdf';
  if (ascii(buf, 4, 4) === 'ftyp') {
    const brand = ascii(buf, 8, 4);
    if (brand.startsWith('avi')) return 'avif';
    if (/^(hei|hev|mif1|msf1)/.test(brand)) return 'heic';
  }
  if (ascii(buf, 0, 4) === 'II*\0' || ascii(buf, 0, 4) === 'MM\0*') return 'tiff';
  if (ascii(buf, 0, 2) === 'BM') return 'bmp';
  if (buf[0] === 0 && buf[1] === 0 && buf[2] === 1 && buf[3] === 0) return 'ico';
  if (ascii(buf, 0, 4) === 'PK\x03\x04') return 'zip';
  if (buf[0] === 0x1f && buf[1] === 0x8b) return 'gzip';
  const head = new TextDecoder('utf-8', { fatal: false }).decode(buf.subarray(0, 4096)).replace(/^\uFEFF/, '');
  if (/<svg[\s>]/i.test(head)) return 'svg';
  if (/^\s*(<!doctype html|<html)/i.test(head)) return 'html';
  // Text: decodes as UTF-8 with no control character but tabs and line breaks.
  if (buf.length && isText(buf.subarray(0, 4096))) return 'text';
  return null;
}

function isText(buf: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    // A multi-byte character cut at the end of the sample is still text.
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, Math.max(0, buf.length - 3)));
    } catch {
      return false;
    }
  }
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
}

/**
 * Whether the image carries metadata beyond what displaying it needs (colour profile, JFIF/Adobe markers): EXIF
 * (a camera's GPS position, its serial number), XMP, IPTC, comments, PNG text chunks. Such an image is re-encoded
 * without it (images.process.ts); one without is kept byte for byte. A structure this walk cannot follow counts as
 * carrying metadata: the image is re-encoded, which is always safe.
 */
export function hasMetadata(buf: Uint8Array, format: ImageFormat): boolean {
  try {
    switch (format) {
      case 'jpeg':
        return jpegHasMetadata(buf);
      case 'png':
        return pngHasMetadata(buf);
      case 'webp':
        return webpChunks(buf).some((c) => c === 'EXIF' || c === 'XMP ');
      case 'gif':
        return gifHasMetadata(buf);
    }
  } catch {
    return true;
  }
}

/** Whether a WebP image is lossless (its image data is a VP8L chunk): it is re-encoded losslessly then. */
export function isLosslessWebp(buf: Uint8Array): boolean {
  try {
    return webpChunks(buf).includes('VP8L');
  } catch {
    return false;
  }
}

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u32be = (b: Uint8Array, at: number) =>
  ((b[at]! << 24) >>> 0) + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
const u32le = (b: Uint8Array, at: number) =>
  ((b[at + 3]! << 24) >>> 0) + ((b[at + 2]! << 16) | (b[at + 1]! << 8) | b[at]!);

class Malformed extends Error {}

/** JPEG markers before the image data: APP0 (JFIF), APP2 (ICC) and APP14 (Adobe) are display data; APP1 (EXIF, XMP), APP13 (IPTC), COM and the other APPn are metadata. */
function jpegHasMetadata(b: Uint8Array): boolean {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) throw new Malformed();
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return false; // start of scan: no more markers of interest
    if (marker >= 0xd0 && marker <= 0xd7) {
      at += 2;
      continue;
    }
    const length = u16be(b, at + 2);
    if (length < 2) throw new Malformed();
    if (marker === 0xfe) return true; // COM
    if (marker >= 0xe0 && marker <= 0xef && marker !== 0xe0 && marker !== 0xe2 && marker !== 0xee) return true;
    at += 2 + length;
  }
  throw new Malformed();
}

/** PNG chunks: tEXt, zTXt, iTXt (text, often XMP), eXIf and tIME are metadata. */
function pngHasMetadata(b: Uint8Array): boolean {
  let at = 8;
  while (at + 8 <= b.length) {
    const length = u32be(b, at);
    const type = ascii(b, at + 4, 4);
    if (type === 'tEXt' || type === 'zTXt' || type === 'iTXt' || type === 'eXIf' || type === 'tIME') return true;
    if (type === 'IEND') return false;
    at += 12 + length;
  }
  throw new Malformed();
}

/** The four-character ids of a WebP file's chunks. */
function webpChunks(b: Uint8Array): string[] {
  const out: string[] = [];
  let at = 12;
  while (at + 8 <= b.length) {
    out.push(ascii(b, at, 4));
    const size = u32le(b, at + 4);
    at += 8 + size + (size % 2);
  }
  if (!out.length) throw new Malformed();
  return out;
}

/** GIF blocks: a comment extension (0xFE) or an application extension other than the NETSCAPE/ANIMEXTS loop count (XMP) is metadata. */
function gifHasMetadata(b: Uint8Array): boolean {
  let at = 13;
  const flags = b[10]!;
  if (flags & 0x80) at += 3 * 2 ** ((flags & 7) + 1); // global colour table
  const skipSubBlocks = () => {
    while (at < b.length && b[at] !== 0) at += b[at]! + 1;
    if (at >= b.length) throw new Malformed();
    at++;
  };
  while (at < b.length) {
    const introducer = b[at]!;
    if (introducer === 0x3b) return false; // trailer
    if (introducer === 0x21) {
      const label = b[at + 1]!;
      if (label === 0xfe) return true;
      if (label === 0xff) {
        const app = ascii(b, at + 3, 8);
        if (app !== 'NETSCAPE' && app !== 'ANIMEXTS') return true;
      }
      at += 2;
      skipSubBlocks();
    } else if (introducer === 0x2c) {
      const local = b[at + 9]!;
      at += 10;
      if (local & 0x80) at += 3 * 2 ** ((local & 7) + 1);
      at++; // LZW minimum code size
      skipSubBlocks();
    } else {
      throw new Malformed();
    }
  }
  throw new Malformed();
}
