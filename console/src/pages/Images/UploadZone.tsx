/**
 * Uploading images to the library: files chosen (a button, so the keyboard reaches it) or dropped on the zone, sent
 * one after the other to POST /v1/images (multipart, field `file`) by XMLHttpRequest for its progress, each with its
 * own progress bar and, when refused, why in plain words (too large, not an image).
 */
import { useRef, useState, type DragEvent } from 'react';
import { ApiError, uploadWithProgress } from '../../api/client';
import { describeError } from '../../lib/problems';
import { Button } from '../../components';
import { formatBytes, type LibraryImage } from '../../lib/templates';

/** Contract §16: up to 5 MB. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const ACCEPT = 'image/png,image/jpeg,image/gif,image/webp';

interface Upload {
  key: number;
  name: string;
  size: number;
  loaded: number;
  state: 'waiting' | 'uploading' | 'done' | 'failed';
  error?: string;
}

function tooLarge(name: string, size: number): string {
  return `${name} is too large (${formatBytes(size)}): an image can be at most 5 MB. Make it smaller or save it as a JPEG, then upload it again.`;
}

/** What went wrong with one file, in words. */
export function uploadError(file: { name: string; size: number }, err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 413 || err.code === 'payload_too_large') return tooLarge(file.name, file.size);
    // The service says what the bytes are and what the name or type claimed ("the file is an SVG image…").
    if (err.code === 'unsupported_media_type' || err.code === 'validation_failed') {
      const why = err.problem.errors?.[0]?.message ?? err.problem.detail;
      return `${file.name} was not uploaded: ${
        why && err.code === 'unsupported_media_type'
          ? why
          : `the file ${why ?? 'is not a PNG, JPEG, GIF or WebP image'}`
      }.`;
    }
    if (err.status === 403) return `You may not upload images: ask an editor or an admin of the workspace.`;
    return `${file.name} was not uploaded. ${describeError(err)}`;
  }
  return `${file.name} was not uploaded: ${err instanceof Error ? err.message : 'something went wrong.'}`;
}

function send(file: File, onProgress: (loaded: number) => void): Promise<LibraryImage> {
  const form = new FormData();
  form.append('file', file, file.name);
  return uploadWithProgress<LibraryImage>('/v1/images', form, { onProgress }).promise;
}

let nextKey = 1;

export function UploadZone({ onUploaded }: { onUploaded: (img: LibraryImage) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const queue = useRef<Promise<void>>(Promise.resolve());
  const busy = uploads.some((u) => u.state === 'waiting' || u.state === 'uploading');

  const patch = (key: number, p: Partial<Upload>) =>
    setUploads((xs) => xs.map((u) => (u.key === key ? { ...u, ...p } : u)));

  const add = (files: File[]) => {
    if (files.length === 0) return;
    const items = files.map((f) => ({ file: f, key: nextKey++ }));
    // Finished uploads make room for the new ones; those still running stay.
    setUploads((xs) => [
      ...xs.filter((u) => u.state === 'waiting' || u.state === 'uploading'),
      ...items.map(({ file, key }) =>
        file.size > MAX_IMAGE_BYTES
          ? {
              key,
              name: file.name,
              size: file.size,
              loaded: 0,
              state: 'failed' as const,
              error: tooLarge(file.name, file.size),
            }
          : { key, name: file.name, size: file.size, loaded: 0, state: 'waiting' as const },
      ),
    ]);
    for (const { file, key } of items) {
      if (file.size > MAX_IMAGE_BYTES) continue;
      queue.current = queue.current.then(async () => {
        patch(key, { state: 'uploading' });
        try {
          const img = await send(file, (loaded) => patch(key, { loaded }));
          patch(key, { state: 'done', loaded: file.size });
          onUploaded(img);
        } catch (err) {
          patch(key, { state: 'failed', error: uploadError(file, err) });
        }
      });
    }
  };

  const over = (e: DragEvent) => {
    if (!e.dataTransfer.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  };
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    add([...e.dataTransfer.files]);
  };

  return (
    <section
      className={dragging ? 'drop-zone dragging' : 'drop-zone'}
      aria-labelledby="upload-h"
      onDragEnter={over}
      onDragOver={over}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={drop}
    >
      <h2 id="upload-h" className="visually-hidden">
        Upload images
      </h2>
      <p className="muted">Drop images here, or</p>
      <Button variant="primary" onClick={() => input.current?.click()}>
        Choose images…
      </Button>
      <input
        ref={input}
        type="file"
        accept={ACCEPT}
        multiple
        hidden
        onChange={(e) => {
          add([...(e.target.files ?? [])]);
          e.target.value = '';
        }}
      />
      <p className="muted small">
        PNG, JPEG, GIF or WebP, up to 5 MB each. Images wider than 1,200 px are made smaller, and their metadata
        (camera, location) is removed.
      </p>
      {uploads.length > 0 && (
        <ul className="upload-list" aria-label="Uploads">
          {uploads.map((u) => {
            const pct = u.size ? Math.min(100, Math.round((u.loaded / u.size) * 100)) : 0;
            const id = `upload-${u.key}`;
            return (
              <li key={u.key} className="upload-item">
                <span id={id} className="cell-value">
                  {u.name}
                </span>
                <span className="small muted" role={u.state === 'done' ? 'status' : undefined}>
                  {u.state === 'waiting'
                    ? 'Waiting…'
                    : u.state === 'uploading'
                      ? `Uploading: ${pct}%`
                      : u.state === 'done'
                        ? 'Uploaded'
                        : 'Not uploaded'}
                </span>
                {(u.state === 'uploading' || u.state === 'waiting') && (
                  <progress max={100} value={pct} aria-labelledby={id}>
                    {pct}%
                  </progress>
                )}
                {u.state === 'failed' && (
                  <div className="error" role="alert">
                    {u.error}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {!busy && uploads.length > 0 && (
        <Button size="sm" variant="ghost" onClick={() => setUploads([])}>
          Clear this list
        </Button>
      )}
    </section>
  );
}
