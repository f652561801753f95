-- What the Claude Code hooks capture and what the boot loads (issue 27).

-- Pinned memories load at boot (seed 000): brain.boot_payload reads the pinned
-- memories of a project as an index-ordered top-k, ranked as the BLOCKER rules
-- are (rating, importance, newest), so a boot reads about as many of them as
-- it shows. A pinned memory with a skill trigger loads as a skill (always_on)
-- or on demand, never here: the index leaves it out.
CREATE INDEX memory_boot_pinned ON brain.memory
    (workspace_id, project, (upvotes - downvotes) DESC, importance DESC, created_at DESC, memory_id DESC)
    WHERE pinned AND state = 'active' AND skill_trigger IS NULL;

-- Captured turns were flagged for their speaker: observe_transcript stores a
-- turn as "User: …" or "Assistant: …", and the injection detector read that
-- prefix as a role marker, so every captured turn waited in the Flagged list,
-- out of the boot payload. The speaker is in metadata (role); the prefix is no
-- role marker any more (brain._turn_signals). Turns flagged role-marker whose
-- text shows no role marker once the prefix is set aside lose that reason
-- (the other reasons stay), with an audit row each. Confirmed flags are left
-- as they are.
WITH turn AS (
    SELECT m.workspace_id, m.memory_id, m.flag_reasons,
           substr(ltrim(t.text), length(m.metadata->>'role') + 2) AS rest
    FROM brain.memory m
    CROSS JOIN LATERAL (SELECT CASE WHEN m.body <> '' THEN m.body ELSE m.headline END AS text) AS t
    WHERE m.origin = 'observed' AND m.source_system IS NOT NULL AND m.flag_confirmed_at IS NULL
      AND 'role-marker' = ANY (m.flag_reasons)
      AND m.metadata->>'role' IN ('user', 'assistant')
      AND lower(left(ltrim(t.text), length(m.metadata->>'role') + 1)) = (m.metadata->>'role') || ':'
), fixed AS (
    UPDATE brain.memory m SET flag_reasons = array_remove(m.flag_reasons, 'role-marker')
    FROM turn
    WHERE m.workspace_id = turn.workspace_id AND m.memory_id = turn.memory_id
      AND NOT (turn.rest ~* '(^|\n)\s*(#+\s*)?(system|assistant|developer|human|user)\s*(prompt\s*)?:'
               OR turn.rest ~* '<\|(im_start|im_end|system|assistant|user|endoftext)\|>|\[/?INST\]|<</?SYS>>|</?(system|assistant|instructions?)>')
    RETURNING m.workspace_id, m.memory_id
)
INSERT INTO brain.audit (workspace_id, memory_id, action, actor, detail)
SELECT f.workspace_id, f.memory_id, 'update', 'migration 019-hook-capture',
       jsonb_build_object('flag_reasons_removed', jsonb_build_array('role-marker'),
                          'why', 'the User: / Assistant: a captured turn starts with names its speaker')
FROM fixed AS f;

-- A session with nothing to hand off wrote "Written from the transcript of …:
-- 0 prompts and 0 replies." over the last real handoff (issue 27). Such
-- handoffs say nothing: they are taken away, and the real handoff before them
-- is again the one the next session gets. (brain.transcript_handoff writes
-- none now.)
UPDATE brain.session
SET handoff = NULL
WHERE handoff ~ '^Written from the transcript of [^\n]* at [^\n]*: 0 prompts and 0 replies\.$' AND snapshot IS NULL;
DELETE FROM brain.handoff
WHERE text ~ '^Written from the transcript of [^\n]* at [^\n]*: 0 prompts and 0 replies\.$' AND snapshot IS NULL;
