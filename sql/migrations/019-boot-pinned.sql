-- Pinned memories load at boot (seed 000, issue 27): brain.boot_payload reads
-- the pinned memories of a project as an index-ordered top-k, ranked as the
-- BLOCKER rules are (rating, importance, newest), so a boot reads about as
-- many of them as it shows. A pinned memory with a skill trigger loads as a
-- skill (always_on) or on demand, never here: the index leaves it out.
CREATE INDEX memory_boot_pinned ON brain.memory
    (workspace_id, project, (upvotes - downvotes) DESC, importance DESC, created_at DESC, memory_id DESC)
    WHERE pinned AND state = 'active' AND skill_trigger IS NULL;
