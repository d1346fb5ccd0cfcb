/**
 * The editor's calls: the preview's render (POST /v1/email-documents/render, through the typed client) and image
 * uploads (POST /v1/images, multipart, by XMLHttpRequest for its progress), with their failures in plain words.
 */
import { api, ApiError, unwrap, uploadWithProgress, type Upload } from '../../api/client';
import { describeError } from '../../lib/problems';
import type { operations, paths } from '../../api/generated/schema';
import type { BlockDocument } from './document';

export type Rendered = paths['/v1/email-documents/render']['post']['responses'][200]['content']['application/json'];

/** The document rendered as the send will (Liquid personalised for `contactId`, or sample data), nothing saved. */
export async function renderDocument(doc: BlockDocument, contactId: string, signal?: AbortSignal): Promise<Rendered> {
  return unwrap(
    await api.POST('/v1/email-documents/render', {
      body: { editorContent: doc, ...(contactId ? { contactId } : {}) },
      signal,
    }),
  );
}

/** POST /v1/images's answer (201: a new image, or the same image uploaded before). */
export type UploadedImage = operations['createImage']['responses'][201]['content']['application/json'];

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Why a file cannot be uploaded before trying (the server checks again, by the bytes), or null. */
export function precheck(file: File): string | null {
  if (file.size > MAX_IMAGE_BYTES)
    return `${file.name} is ${(file.size / 1024 / 1024).toFixed(1)} MB: images can be at most 5 MB. Make it smaller and try again.`;
  if (file.type && !IMAGE_TYPES.has(file.type))
    return `${file.name} is not a PNG, JPEG, GIF or WebP image, so it cannot go in an email.`;
  return null;
}

/** A failed upload in words a person can act on. */
export function uploadErrorText(file: File, err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 413 || err.code === 'payload_too_large')
      return `${file.name} is too large: images can be at most 5 MB. Make it smaller and try again.`;
    if (err.code === 'unsupported_media_type' || err.status === 415)
      return `${file.name} is not a PNG, JPEG, GIF or WebP image (its content was checked, not its name).`;
    if (err.status === 403) return 'Your role cannot upload images: ask an editor or an admin.';
    if (err.status === 404) return 'This server cannot store images yet (no image upload here).';
    if (err.status === 429) return 'Too many uploads at once: wait a moment and try again.';
    return `${file.name} could not be uploaded. ${describeError(err)}`;
  }
  return err instanceof Error ? err.message : `${file.name} could not be uploaded.`;
}

/** POST /v1/images with the file as the multipart field `file`. */
export function uploadImage(file: File, onProgress?: (fraction: number) => void): Upload<UploadedImage> {
  const form = new FormData();
  form.append('file', file, file.name);
  return uploadWithProgress<UploadedImage>('/v1/images', form, {
    onProgress: (loaded, total) => onProgress?.(total ? loaded / total : 0),
  });
}
