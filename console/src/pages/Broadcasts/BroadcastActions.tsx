/** Duplicate and Delete for one broadcast (its list row and its page): a copy is a new draft; only a draft is deleted. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api/client';
import { broadcastKeys } from '../../api/keys';
import { CopyDeleteActions, useToast } from '../../components';
import { duplicateBroadcast } from '../../lib/duplicate';

interface BroadcastLike {
  id: string;
  name: string;
  status: string;
}

function whyNot(status: string): { short: string; instead: string } | null {
  switch (status) {
    case 'DRAFT':
      return null;
    case 'SCHEDULED':
      return {
        short: 'only a draft can be deleted, and this broadcast is scheduled.',
        instead: 'Open it and cancel the schedule: it becomes a draft again, which you can then delete.',
      };
    case 'SENDING':
    case 'PAUSED':
      return {
        short: 'only a draft can be deleted, and this broadcast is being sent.',
        instead: 'Open it to pause or cancel the sending; a canceled broadcast keeps its report.',
      };
    default:
      return {
        short: 'only a draft can be deleted, and this broadcast was sent (or its sending ended).',
        instead: 'It stays with its report of who received, opened and clicked it. Duplicate it to send it again.',
      };
  }
}

export function BroadcastActions({
  broadcast,
  size = 'md',
  onDeleted,
}: {
  broadcast: BroadcastLike;
  size?: 'sm' | 'md';
  onDeleted?: () => void;
}) {
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const duplicate = useMutation({
    mutationFn: () => duplicateBroadcast(broadcast.id),
    onSuccess: ({ copy, senderDropped }) => {
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
      void qc.invalidateQueries({ queryKey: broadcastKeys.recent() });
      toast.success(
        senderDropped
          ? `Copied: “${copy.name}” is a new draft. Choose its sender: the original’s domain is no longer verified.`
          : `Copied: “${copy.name}” is a new draft.`,
      );
      navigate(`/broadcasts/${copy.id}`);
    },
    onError: (err) => toast.error(`Not copied: ${err.message}`),
  });
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(await api.DELETE('/v1/broadcasts/{broadcastId}', { params: { path: { broadcastId: broadcast.id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: broadcastKeys.lists() });
      void qc.invalidateQueries({ queryKey: broadcastKeys.recent() });
      qc.removeQueries({ queryKey: broadcastKeys.detail(broadcast.id) });
      toast.success(`Deleted the draft “${broadcast.name}”.`);
      onDeleted?.();
    },
    onError: (err) => toast.error(`Not deleted: ${err.message}`),
  });
  const reason = whyNot(broadcast.status);
  return (
    <CopyDeleteActions
      kind="broadcast"
      name={broadcast.name}
      size={size}
      whyNot={reason?.short ?? null}
      explanation={reason?.instead}
      deleteNote="The draft and its content are deleted."
      onDuplicate={() => duplicate.mutate()}
      duplicating={duplicate.isPending}
      onDelete={() => remove.mutate()}
      deleting={remove.isPending}
    />
  );
}
