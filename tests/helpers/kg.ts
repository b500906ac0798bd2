/** Knowledge-graph facts as tests write them: certain, open-ended, without provenance and by nobody known unless told. */
import type { KgTripleWrite } from '../../stores/ports/graph-store.js';

type FactIdentity = Pick<KgTripleWrite, 'id' | 'subject' | 'predicate' | 'object' | 'recorded_at'>;

/** A fact with confidence 1, no validity bounds and no provenance; `over` sets the rest. */
export function kgFact(fact: FactIdentity & Partial<KgTripleWrite>): KgTripleWrite {
  return {
    valid_from: null,
    valid_to: null,
    from_key: null,
    to_key: null,
    confidence: 1,
    source_closet: null,
    source_file: null,
    source_drawer_id: null,
    adapter_name: null,
    created_by: null,
    ...fact,
  };
}
