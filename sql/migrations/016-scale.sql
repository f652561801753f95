-- Bounded boot sections: brain.boot_payload takes each section as an
-- index-ordered top-k, so a boot reads about as many rows as it shows
-- whatever the workspace holds (issue 14).

-- BLOCKER rules: pinned first, then rating, importance, newest. One range per
-- project (the session's and the global one), merged by the query.
CREATE INDEX memory_rule_boot_blockers ON brain.memory
    (workspace_id, project, pinned DESC, (upvotes - downvotes) DESC, importance DESC, created_at DESC,
     memory_id DESC)
    WHERE kind = 'rule' AND state = 'active' AND skill_trigger IS NULL;

-- PATTERN rules without a task embedding: rating, then newest.
CREATE INDEX memory_rule_boot_patterns ON brain.memory
    (workspace_id, project, (upvotes - downvotes) DESC, created_at DESC, memory_id DESC)
    WHERE kind = 'rule' AND state = 'active' AND skill_trigger IS NULL;

-- Open and blocked tasks: priority, due date, then id (task_open lacked the
-- id, so ties of one priority and due date were sorted whole to keep 20).
CREATE INDEX task_open_order ON brain.task (workspace_id, priority, due_at, memory_id)
    WHERE status IN ('open', 'blocked');
DROP INDEX brain.task_open;
