/** A sent broadcast in or out of the workspace's public archive (docs/archive.md): PUT /v1/broadcasts/{id}/archive. */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { useCan } from '../../api/session';
import { Checkbox, useToast } from '../../components';
import type { Broadcast } from '../../lib/audience';
import { describeError } from '../../lib/problems';

export function ArchiveCard({ broadcast }: { broadcast: Broadcast }) {
  const can = useCan();
  const toast = useToast();
  const qc = useQueryClient();
  // What was asked, shown at once: the mutation's pending state arrives a render later, and a controlled checkbox
  // whose value did not change within its click handler is put back (it flickered, and a test's check() saw it unchanged).
  const [wanted, setWanted] = useState<boolean | null>(null);
  const set = useMutation({
    mutationFn: async (archive: boolean) =>
      unwrap(
        await api.PUT('/v1/broadcasts/{broadcastId}/archive', {
          params: { path: { broadcastId: broadcast.id } },
          body: { archive },
        }),
      ),
    onSuccess: (b) => {
      qc.setQueryData(broadcastKeys.detail(broadcast.id), b);
      toast.success(b.archive ? 'Shown in the public archive.' : 'Taken out of the public archive.');
    },
    onError: (err) => toast.error(describeError(err)),
    onSettled: () => setWanted(null),
  });
  return (
    <section className="card stack-sm" aria-labelledby="archive-h">
      <h2 id="archive-h">Public archive</h2>
      <Checkbox
        label="Show in the public archive"
        hint="Anyone can read it on your archive page and its feed, without any subscriber's data. The archive's address is set in Settings."
        checked={wanted ?? broadcast.archive}
        onChange={(e) => {
          setWanted(e.target.checked);
          set.mutate(e.target.checked);
        }}
        disabled={!can('write:broadcasts') || set.isPending}
      />
    </section>
  );
}
