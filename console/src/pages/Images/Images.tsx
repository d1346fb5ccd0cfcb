/**
 * The image library: every image the workspace uploaded (for its emails), newest first, as a grid of thumbnails with
 * their size, dimensions and date; upload (choose or drop files), copy an image's public URL, delete (the URL stops
 * working, also in emails already sent).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { imageKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import {
  Button,
  ConfirmDialog,
  CopyButton,
  EmptyState,
  ErrorState,
  ErrorSummary,
  PageHeader,
  Skeleton,
  useCursorList,
  useToast,
} from '../../components';
import { formatDateTime, formatNumber } from '../../lib/format';
import { describeError } from '../../lib/problems';
import { formatBytes, type LibraryImage } from '../../lib/templates';
import { UploadZone } from './UploadZone';
import '../../styles/templates.css';

const FORMATS: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
};

/** The name an image was uploaded with (or its id, for one uploaded without a name). */
export function imageName(img: LibraryImage): string {
  return img.name || img.id;
}

function ImageCard({ img, canWrite, onDelete }: { img: LibraryImage; canWrite: boolean; onDelete: () => void }) {
  const name = imageName(img);
  return (
    <li className="card image-card">
      <a className="image-box" href={img.url} target="_blank" rel="noreferrer" aria-label={`Open ${name} in a new tab`}>
        <img src={img.url} alt="" loading="lazy" width={img.width} height={img.height} />
      </a>
      <div className="image-info">
        <span className="image-name" title={name}>
          {name}
        </span>
        <span className="muted small">
          {formatNumber(img.width)} × {formatNumber(img.height)} px · {FORMATS[img.contentType] ?? img.contentType} ·{' '}
          {formatBytes(img.bytes)}
        </span>
        {img.createdAt && <span className="muted small">Uploaded {formatDateTime(img.createdAt)}</span>}
      </div>
      <div className="image-actions">
        <CopyButton text={img.url} label="Copy URL" what={`of ${name}`} />
        {canWrite && (
          <Button size="sm" variant="ghost" onClick={onDelete} aria-label={`Delete ${name}`}>
            Delete
          </Button>
        )}
      </div>
    </li>
  );
}

export default function Images() {
  const can = useCan();
  const qc = useQueryClient();
  const toast = useToast();
  const canWrite = can('write:broadcasts');
  const [deleting, setDeleting] = useState<LibraryImage | null>(null);
  const list = useCursorList<LibraryImage>(imageKeys.list(), async (cursor) =>
    unwrap(await api.GET('/v1/images', { params: { query: { cursor, limit: 48 } } })),
  );
  const remove = useMutation({
    mutationFn: async (img: LibraryImage) =>
      unwrap(await api.DELETE('/v1/images/{imageId}', { params: { path: { imageId: img.id } } })),
    onSuccess: (_r, img) => {
      void qc.invalidateQueries({ queryKey: imageKeys.all });
      toast.success(`${imageName(img)} deleted.`);
      setDeleting(null);
    },
  });
  return (
    <>
      <PageHeader
        needs="write:broadcasts"
        title="Images"
        description="Pictures for your emails: upload them once, then use them in any email by their address."
      />
      <div className="stack">
        {canWrite && <UploadZone onUploaded={() => void qc.invalidateQueries({ queryKey: imageKeys.all })} />}
        {list.isPending ? (
          <Skeleton lines={5} />
        ) : list.isError ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} />
        ) : list.rows.length === 0 ? (
          <div className="card">
            <EmptyState title="No images yet">
              {canWrite
                ? 'Upload a logo or a photo above, or drop one on an image block of the email editor.'
                : 'Images your colleagues upload for emails show here.'}
            </EmptyState>
          </div>
        ) : (
          <section className="stack-sm" aria-labelledby="library-h">
            <h2 id="library-h" className="visually-hidden">
              Your images
            </h2>
            <ul className="image-grid">
              {list.rows.map((img) => (
                <ImageCard
                  key={img.id}
                  img={img}
                  canWrite={canWrite}
                  onDelete={() => {
                    remove.reset();
                    setDeleting(img);
                  }}
                />
              ))}
            </ul>
            {list.hasNextPage && (
              <div className="table-foot">
                <Button onClick={() => void list.fetchNextPage()} loading={list.isFetchingNextPage}>
                  Load more
                </Button>
              </div>
            )}
          </section>
        )}
      </div>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete ${deleting ? imageName(deleting) : 'image'}?`}
        danger
        confirmLabel="Delete image"
        busy={remove.isPending}
        onClose={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting)}
      >
        <p>
          The image's address stops working at once. Emails already sent that show it lose it: their readers see an
          empty box or its alternative text instead. Drafts and templates that use it lose it too.
        </p>
        {remove.isError && <ErrorSummary message={describeError(remove.error)} />}
      </ConfirmDialog>
    </>
  );
}
