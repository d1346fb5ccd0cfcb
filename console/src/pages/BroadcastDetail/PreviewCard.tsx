/** The saved version rendered for a chosen contact (or sample data), as HTML or plain text. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { ContentTabs } from '../../components/ContentTabs';
import { ErrorState, Select, Skeleton, Spinner } from '../../components';
import type { Broadcast } from '../../lib/audience';

export function PreviewCard({
  broadcast,
  contactId,
  setContactId,
}: {
  broadcast: Broadcast;
  contactId: string;
  setContactId: (id: string) => void;
}) {
  const people = useQuery({
    queryKey: broadcastKeys.previewContacts(broadcast.id, broadcast.segmentId, broadcast.topicId),
    queryFn: async () => {
      const audience = unwrap(
        await api.GET('/v1/broadcasts/{broadcastId}/audience', {
          params: { path: { broadcastId: broadcast.id }, query: { limit: 20 } },
        }),
      );
      if (audience.data.length) return audience.data;
      return unwrap(await api.GET('/v1/contacts', { params: { query: { limit: 20 } } })).data;
    },
  });
  const preview = useQuery({
    queryKey: broadcastKeys.preview(broadcast.id, broadcast.updatedAt, contactId),
    queryFn: async () =>
      unwrap(
        await api.POST('/v1/broadcasts/{broadcastId}/preview', {
          params: { path: { broadcastId: broadcast.id } },
          body: contactId ? { contactId } : {},
        }),
      ),
    placeholderData: keepPreviousData,
    retry: false,
  });
  return (
    <section className="card stack-sm" aria-labelledby="preview-h">
      <div className="card-header">
        <h2 id="preview-h">Preview</h2>
        {preview.isFetching && <Spinner size="sm" label="Rendering…" />}
      </div>
      <Select
        label="Render for"
        value={contactId}
        onChange={(e) => setContactId(e.target.value)}
        disabled={people.isPending}
        options={[
          { value: '', label: 'Sample data (no contact)' },
          ...(people.data ?? []).map((c) => ({
            value: c.id,
            label: [c.email, [c.firstName, c.lastName].filter(Boolean).join(' ')].filter(Boolean).join(' — '),
          })),
        ]}
        hint="The saved version, personalised as this contact will get it."
      />
      {preview.isPending ? (
        <Skeleton lines={6} />
      ) : preview.isError ? (
        <ErrorState
          error={preview.error}
          title="The preview could not be rendered"
          onRetry={() => void preview.refetch()}
        />
      ) : (
        preview.data && (
          <>
            <dl className="kv small">
              <dt>Subject</dt>
              <dd data-testid="preview-subject">{preview.data.subject ?? <span className="muted">none yet</span>}</dd>
              <dt>Preview text</dt>
              <dd>{preview.data.previewText ?? <span className="muted">none</span>}</dd>
              <dt>To</dt>
              <dd className="break">{preview.data.contact.email}</dd>
            </dl>
            <ContentTabs
              label="Preview format"
              html={preview.data.html}
              text={preview.data.text}
              title={`Email preview for ${preview.data.contact.email}`}
            />
          </>
        )
      )}
    </section>
  );
}
