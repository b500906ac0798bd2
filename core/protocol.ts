/**
 * The two texts an agent loads on wake-up (docs/tools.md §13, §14): the memory protocol, which says
 * when to read and write the palace, and the AAAK dialect, the compact note format used mostly
 * for diary entries. Both are the project's own wording.
 */

export const PALACE_PROTOCOL = `MemPalace memory protocol

1. Wake-up: call mempalace_status first. It returns the palace overview (wings, rooms, drawer counts) and the AAAK dialect you will read and write diary notes in.
2. Before you answer anything about a person, a project or something that happened before this conversation, look it up: call mempalace_kg_query for facts about an entity, or mempalace_search for the verbatim record. Do not guess; verify.
3. If you are unsure of a fact (a name, a gender, an age, a relationship), say that you are unsure, check the palace, and only then answer. Being slow is better than being wrong.
4. At the end of each session, call mempalace_diary_write: what happened, what you learned, what matters next time.
5. When a fact that can only have one value changes (the model in use, an employer, an address), call mempalace_kg_supersede with the subject, the predicate, the old value and the new value, so the old fact ends and the new one starts at the same instant. Do not invalidate and re-add by hand: that leaves the two values overlapping at the boundary. Use mempalace_kg_invalidate for a fact that simply stopped being true, and mempalace_kg_add for a new fact that can hold alongside others.

Storing things is not remembering them. Storage plus this discipline is memory.`;

export const AAAK_SPEC = `AAAK — a compact note dialect for the palace

AAAK packs a lot of meaning into few characters while staying readable by people and models. It is used mostly for diary entries; drawers keep the original words verbatim.

Entities
  Every person or thing that recurs gets a three-letter uppercase code: ALC = Alice, BOB = Bob, MPL = the MemPalace project. Define a code once (ALC=Alice) and then use only the code.

Emotion markers
  A word between asterisks carries the feeling behind a line and goes before or inside the text it colours: *warm* (warmth, joy), *fierce* (determination), *raw* (vulnerability), *gentle* (tenderness).

Structure
  Fields are separated by pipes ( | ). Short section tags open a group of fields: FAM: family, PRJ: projects, and ⚠ marks a warning or a reminder.

Dates and counts
  Dates are ISO: 2026-03-31. Counts are written Nx: 570x means mentioned 570 times.

Importance
  One to five stars: ★ (minor) … ★★★★★ (essential).

Halls — the kind of memory
  hall_facts, hall_events, hall_discoveries, hall_preferences, hall_advice.

Wings — whose or what memory
  wing_user, wing_agent, wing_team, wing_code, wing_myproject, wing_hardware, wing_ue5, wing_ai_research.

Rooms — one idea each, named as a hyphenated slug
  chromadb-setup, auth-migration, gpu-drivers.

Example
  FAM: ALC=Alice(partner) | *warm* ALC back from Lisbon 2026-03-31 | ⚠ BOB birthday 04-02 | ★★★★

Diary line
  SESSION:2026-03-31 | auth-migration.token-refresh.tests | *fierce* fixed the refresh race | ★★★

Reading AAAK: expand each code to the name it stands for, read the asterisk words as the emotional context of the line, and weigh lines by their stars.
Writing AAAK: use entity codes, mark the emotion, keep it tight — one idea per field.`;
