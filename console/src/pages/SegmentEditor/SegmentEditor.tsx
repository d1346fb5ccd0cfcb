/**
 * A segment: its name and the visual filter builder, the filter as JSON, and the live count of what it
 * matches (POST /v1/segments/preview, debounced), with the API's validation errors next to each condition.
 * /segments/new creates one; /segments/:id edits, renames or deletes it.
 */
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../../api/client';
import { segmentKeys } from '../../api/keys';
import { QueryState } from '../../components';
import { Editor } from './Editor';
import '../../styles/audience.css';

export default function SegmentEditor() {
  const { segmentId = 'new' } = useParams();
  const q = useQuery({
    queryKey: segmentKeys.detail(segmentId),
    queryFn: async () => unwrap(await api.GET('/v1/segments/{segmentId}', { params: { path: { segmentId } } })),
    enabled: segmentId !== 'new',
  });
  if (segmentId === 'new') return <Editor segment={null} />;
  return (
    <QueryState query={q} skeleton={8}>
      {(segment) => <Editor key={segment.id} segment={segment} />}
    </QueryState>
  );
}
