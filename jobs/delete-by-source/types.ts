/** The activities the delete-by-source orchestration calls. Types only, as jobs/mine/types.ts. */
import type { DeleteBySourceSpec, Fence } from '../job.js';

export interface DeleteBySourceActivities {
  deleteBySourceCount(input: { spec: DeleteBySourceSpec }): Promise<{ match_count: number; match_rows: number; sample: { wing: string; room: string }[] }>;
  deleteBySourceApply(input: { spec: DeleteBySourceSpec; fence?: Fence }): Promise<{ deleted_rows: number }>;
}
