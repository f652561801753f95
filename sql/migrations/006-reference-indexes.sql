-- Indexes behind the foreign keys that point from one memory to another.
-- Deleting a memory (a batch row folded into a near-identical one, a pruned
-- tombstone) checks that no memory still names it in supersedes or
-- replaced_by; without these indexes each check read the whole table.
-- superseded_by has had its index (memory_superseded_by) since 001.

CREATE INDEX memory_supersedes ON brain.memory (workspace_id, supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memory_replaced_by ON brain.memory (workspace_id, replaced_by) WHERE replaced_by IS NOT NULL;
