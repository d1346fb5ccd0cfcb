import crypto from 'node:crypto';
import type { Db } from '../../db/connection.js';
import { DomainError, notFound, validationFailed } from '../../errors/errors.js';
import { newId } from '../../lib/ids.js';
import { nowIso } from '../../lib/time.js';
import {
  CONTENT_TYPES,
  EXTENSIONS,
  FORMAT_NAMES,
  imageFormatOf,
  otherFormatOf,
  type ImageFormat,
} from './images.bytes.js';
import { ImageRefused, processImage } from './images.process.js';
import * as repo from './images.repository.js';
import type { Image } from './images.schemas.js';

/** The largest file accepted: 5 MiB (contract §16). */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
/** Characters kept of an uploaded file's name. */
const NAME_LENGTH = 200;

export interface Upload {
  data: Buffer;
  /** The name the client gave the file, if any. */
  filename?: string;
  /** The Content-Type the client declared for the file, if any. */
  mimetype?: string;
}

export interface ImagesSettings {
  /** PUBLIC_URL: images are served under it (`/i/{id}.{ext}`). */
  publicUrl: string;
}

/**
 * What a file's extension says it is (keys of FORMAT_NAMES); an extension not listed says nothing. Only to word a
 * refusal, and to check the extension of a public address: an upload's format is its bytes'.
 */
const EXTENSION_FORMATS: Record<string, string> = {
  png: 'png',
  apng: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  jpe: 'jpeg',
  jfif: 'jpeg',
  pjpeg: 'jpeg',
  pjp: 'jpeg',
  gif: 'gif',
  webp: 'webp',
  svg: 'svg',
  svgz: 'svg',
  pdf: 'pdf',
  heic: 'heic',
  heif: 'heic',
  avif: 'avif',
  tif: 'tiff',
  tiff: 'tiff',
  bmp: 'bmp',
  ico: 'ico',
  txt: 'text',
  html: 'html',
  htm: 'html',
  zip: 'zip',
};

/**
 * What a declared media type says, only to word a refusal; application/octet-stream, text/plain (what a part without
 * a Content-Type is taken to be: RFC 7578) and unknown types say nothing.
 */
const MEDIA_TYPE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/apng': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'image/heic': 'heic',
  'image/heif': 'heic',
  'image/avif': 'avif',
  'image/tiff': 'tiff',
  'image/bmp': 'bmp',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
  'text/html': 'html',
  'application/zip': 'zip',
};

const FILE = '/file';

const refuse = (detail: string) =>
  new DomainError('unsupported_media_type', detail, { status: 422, errors: [{ path: FILE, message: detail }] });

/** The file's name as stored and shown: its last path segment, without control or bidirectional-override characters. */
export function sanitizeName(filename: string | undefined): string | null {
  if (!filename) return null;
  const base = filename.split(/[/\\]/).pop() ?? '';
  const clean = base
    .toWellFormed()
    .normalize('NFC')
    .replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  const points = [...clean];
  return points.length ? points.slice(0, NAME_LENGTH).join('') : null;
}

function extensionOf(name: string | null): string | undefined {
  const m = name ? /\.([A-Za-z0-9]{1,5})$/.exec(name) : null;
  return m ? m[1]!.toLowerCase() : undefined;
}

/** The image's public address. */
export function imageUrl(publicUrl: string, id: string, contentType: string): string {
  const format = (Object.keys(CONTENT_TYPES) as ImageFormat[]).find((f) => CONTENT_TYPES[f] === contentType) ?? 'png';
  return `${publicUrl}/i/${id}.${EXTENSIONS[format]}`;
}

export class ImagesService {
  constructor(
    private readonly db: Db,
    private readonly settings: ImagesSettings,
  ) {}

  private toImage(r: repo.ImageRow): Image {
    return {
      id: r.id,
      url: imageUrl(this.settings.publicUrl, r.id, r.content_type),
      contentType: r.content_type,
      width: r.width,
      height: r.height,
      bytes: r.bytes,
      name: r.name,
      createdAt: r.created_at,
    };
  }

  /**
   * Stores an uploaded image (docs/images.md): its type read from the bytes (whatever its name and declared type say),
   * the whole image decoded, resized, turned upright and stripped of metadata where needed. When the workspace
   * already has an image with the same stored bytes, that one is returned and nothing is written.
   */
  async upload(workspaceId: string, upload: Upload): Promise<Image> {
    if (upload.data.length > MAX_UPLOAD_BYTES) throw tooLarge(upload.data.length);
    if (upload.data.length === 0) throw validationFailed([{ path: FILE, message: 'is empty' }]);
    const name = sanitizeName(upload.filename);
    const format = this.formatOf(upload, name);
    let processed;
    try {
      processed = await processImage(upload.data, format);
    } catch (err) {
      if (!(err instanceof ImageRefused)) throw err;
      if (err.reason === 'too_many_pixels') throw validationFailed([{ path: FILE, message: err.message }]);
      throw refuse(
        `the file looks like a ${FORMAT_NAMES[format]} image but ${err.message.replace(/^the image /, 'it ')}`,
      );
    }
    const sha256 = crypto.createHash('sha256').update(processed.data).digest('hex');
    const row: repo.ImageRow = {
      id: newId('img'),
      content_type: CONTENT_TYPES[format],
      width: processed.width,
      height: processed.height,
      bytes: processed.data.length,
      sha256,
      name,
      created_at: nowIso(),
    };
    if (await repo.insertImage(this.db.kysely, workspaceId, { ...row, data: processed.data })) return this.toImage(row);
    const existing = await repo.findImageBySha256(this.db.kysely, workspaceId, sha256);
    // Deleted between the two statements: store this one after all.
    if (!existing) return this.upload(workspaceId, upload);
    return this.toImage(existing);
  }

  /**
   * The format of the bytes, when it is one of the four (contract §16: the type is read from the bytes). The file's
   * name and declared type do not decide it: a PNG named photo.jpg is a PNG, stored and served as one. Bytes that are
   * none of the four are 422 unsupported_media_type, naming what they look like (and what the name or type said).
   */
  private formatOf(upload: Upload, name: string | null): ImageFormat {
    const format = imageFormatOf(upload.data);
    if (!format) {
      const ext = extensionOf(name);
      const byName = ext ? EXTENSION_FORMATS[ext] : undefined;
      const mediaType = upload.mimetype?.split(';')[0]!.trim().toLowerCase();
      const byType = mediaType ? MEDIA_TYPE_FORMATS[mediaType] : undefined;
      const other = otherFormatOf(upload.data);
      const seen = other ? `the file is ${article(other)}` : 'the file is not an image this service can read';
      const why =
        other === 'svg'
          ? ': most email clients do not show SVG (and an SVG can carry scripts); export it as PNG'
          : '; upload a PNG, JPEG, GIF or WebP image';
      const claimed = byName ?? byType;
      const said =
        claimed && claimed !== other ? ` (its ${byName ? 'name says' : 'type says'} ${FORMAT_NAMES[claimed]})` : '';
      throw refuse(`${seen}${said}${why}`);
    }
    return format;
  }

  async get(workspaceId: string, id: string): Promise<Image> {
    const r = await repo.getImage(this.db.kysely, workspaceId, id);
    if (!r) throw notFound('image');
    return this.toImage(r);
  }

  async list(workspaceId: string, limit: number, beforeId?: string): Promise<Image[]> {
    return (await repo.listImages(this.db.kysely, workspaceId, limit, beforeId)).map((r) => this.toImage(r));
  }

  /** Deletes the image: its address answers 404 from now on, in emails already sent too. */
  async remove(workspaceId: string, id: string): Promise<void> {
    if (!(await repo.deleteImage(this.db.kysely, workspaceId, id))) throw notFound('image');
  }

  /** An image's bytes for its public address (`/i/{id}` or `/i/{id}.{ext}`), or undefined (404). */
  async publicFile(file: string): Promise<{ contentType: string; etag: string; data: Buffer } | undefined> {
    const m = /^(img_[0-9A-HJKMNP-TV-Z]{26})(?:\.([a-z]{3,4}))?$/.exec(file);
    if (!m) return undefined;
    const row = await repo.publicImage(this.db.kysely, m[1]!);
    if (!row) return undefined;
    // An extension must be the image's own (jpg or jpeg for a JPEG): one address per image.
    const byExtension = m[2] ? EXTENSION_FORMATS[m[2]] : undefined;
    if (m[2] && (!byExtension || CONTENT_TYPES[byExtension as ImageFormat] !== row.content_type)) return undefined;
    return { contentType: row.content_type, etag: `"${row.sha256}"`, data: row.data };
  }
}

function article(format: string): string {
  const name = FORMAT_NAMES[format] ?? format;
  if (format === 'text') return 'a text file';
  const kind =
    format === 'pdf'
      ? 'document'
      : format === 'zip' || format === 'gzip'
        ? 'archive'
        : format === 'html'
          ? 'page'
          : 'image';
  return `${/^[AEFHILMNORSX]/.test(name) ? 'an' : 'a'} ${name} ${kind}`;
}

export function tooLarge(bytes?: number): DomainError {
  return new DomainError(
    'payload_too_large',
    `an image must be at most 5 MiB (${MAX_UPLOAD_BYTES.toLocaleString('en')} bytes)${bytes ? `; this upload is ${bytes.toLocaleString('en')} bytes` : ''}: resize or compress it first`,
    { extra: { limit: MAX_UPLOAD_BYTES } },
  );
}
