/** A sent broadcast in or out of the workspace's public archive (docs/archive.md): PUT /v1/broadcasts/{id}/archive. */
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
  });
  return (
    <section className="card stack-sm" aria-labelledby="archive-h">
      <h2 id="archive-h">Public archive</h2>
      <Checkbox
        label="Show in the public archive"
        hint="Anyone can read it on your archive page and its feed, without any subscriber's data. The archive's address is set in Settings."
        checked={set.isPending ? set.variables : broadcast.archive}
        onChange={(e) => set.mutate(e.target.checked)}
        disabled={!can('write:broadcasts') || set.isPending}
      />
    </section>
  );
}
