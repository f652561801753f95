-- Reads beside search: previews and the passage that matched, the memories
-- related to one, skills, recent memories.

-- Not inlined on purpose (the SET clause): as a function call it counts as
-- expensive, so a query evaluates it only for the rows left after its LIMIT.
CREATE OR REPLACE FUNCTION brain.preview(body text, max_chars integer DEFAULT 160)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(t) <= max_chars THEN t
                ELSE rtrim(left(t, max_chars - 1)) || '…' END
    FROM (SELECT brain.trim_space(regexp_replace(coalesce(body, ''), '\s+', ' ', 'g')) AS t) AS x
$$;
COMMENT ON FUNCTION brain.preview IS 'The start of a body on one line, at most max_chars characters.';

-- The passage of a body that matched a query: around the query's word that
-- the body holds fewest times (a number that tells one log line from the
-- next, rather than the word every line has; ties: the longer word), taken
-- as the query's stems, the tokens it names verbatim (brain.exact_tokens)
-- and its words with digits, each found at a word's start; the start of the
-- body when none is found (a search by vector alone). At most max_chars
-- characters on one line, with … where the body goes on; the words are the
-- body's own, numbers and all. Not inlined (the SET clause): search
-- computes it for the rows of its page only.
CREATE OR REPLACE FUNCTION brain._match_window(body text, query text, max_chars integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- the body on one line, and a copy with every character but letters and digits a
    -- space, each computed once (as one SQL query of subqueries the planner copied these
    -- expressions into every use: 60 ms for a 16k body, 15 ms for 4k)
    t text := brain.trim_space(regexp_replace(coalesce(body, ''), '\s+', ' ', 'g'));
    spaced text;
    hit integer;
    s0 integer;
    s integer;
BEGIN
    IF length(t) <= max_chars THEN
        RETURN brain.preview(t, max_chars);
    END IF;
    spaced := ' ' || regexp_replace(lower(t), '[^[:alnum:]]', ' ', 'g');
    -- words as ' word' in the spaced copy: the one the body holds fewest times
    SELECT strpos(spaced, ' ' || k.w) INTO hit
    FROM (SELECT k.w, (length(spaced) - length(replace(spaced, ' ' || k.w, ''))) / length(' ' || k.w) AS times
          FROM (SELECT DISTINCT regexp_replace(k.tok, '[^[:alnum:]]', ' ', 'g') AS w
                FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')))
                            || brain.exact_tokens(query)
                            || ARRAY(SELECT lower(d[1])
                                     FROM regexp_matches(coalesce(query, ''), '([[:alnum:]]*[0-9][[:alnum:]]*)', 'g') AS d)
                      ) AS k(tok)) AS k
          WHERE k.w ~ '[[:alnum:]]') AS k
    WHERE k.times > 0
    ORDER BY k.times, length(k.w) DESC, k.w
    LIMIT 1;
    IF coalesce(hit, 1) <= 1 THEN
        RETURN brain.preview(t, max_chars);
    END IF;
    -- from a word's start a little before the match, the window full where the body allows
    s0 := greatest(1, least(hit - 40, length(t) - max_chars + 3));
    s := CASE WHEN s0 <= 1 THEN 1
              WHEN substr(t, s0 - 1, 1) = ' ' THEN s0
              ELSE s0 + coalesce(nullif(strpos(substr(t, s0, 24), ' '), 0), 0) END;
    RETURN CASE WHEN s > 1 THEN '…' ELSE '' END
           || CASE WHEN s + max_chars - 2 <= length(t) THEN rtrim(substr(t, s, max_chars - 2)) || '…'
                   ELSE substr(t, s) END;
END
$$;
-- A body short enough to show whole, or a search without words, costs no more
-- than the start of the body.
CREATE OR REPLACE FUNCTION brain.match_preview(body text, query text, max_chars integer DEFAULT 160)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(coalesce(body, '')) <= max_chars OR brain.trim_space(coalesce(query, '')) = ''
                THEN brain.preview(body, max_chars)
                ELSE brain._match_window(body, query, max_chars) END
$$;
COMMENT ON FUNCTION brain.match_preview IS
    'The passage of a body around what a query matched (the query''s word the body holds fewest times: a number before a word every line has), at most max_chars characters on one line with … where the body goes on; the start of the body when nothing matched. Search''s preview.';

-- The memory a stored one may contradict or replace (docs/ranking.md,
-- "Conflicts"): the nearest active memory of the same kind and project,
-- other than itself, at least the active space's `related` similarity, whose
-- text differs from it in distinguishing terms only (each has a term the
-- other lacks: "Node.js runtime is version 20" and "... version 22"). NULL
-- when there is none (or no vector yet). Never refuses or changes
-- anything: the caller decides whether the new memory supersedes it.
CREATE OR REPLACE FUNCTION brain.related_memory(memory_id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    space brain.embedding_space := brain.active_embedding_space();
    mem brain.memory;
    vec public.vector;
    near record;
    other brain.memory;
    mine text[];
    theirs text[];
BEGIN
    SELECT * INTO mem FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = related_memory.memory_id;
    IF mem.memory_id IS NULL OR space.space_id IS NULL THEN
        RETURN NULL;
    END IF;
    vec := brain._stored_vector(space, mem.memory_id);
    IF vec IS NULL THEN
        RETURN NULL;
    END IF;
    mine := brain._terms_of(mem.fact_terms, mem.headline, mem.body);
    FOR near IN
        SELECT x.memory_id, x.similarity
        FROM brain._near_write(space, vec, mem.kind, mem.project, mem.memory_id, space.related) AS x
        WHERE x.similarity >= space.related
        ORDER BY x.similarity DESC, x.memory_id
        LIMIT 5
    LOOP
        SELECT * INTO other FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id;
        -- (authored memories only, as the write's related policy: a captured turn or text is
        -- a record of what was said, never one a write replaces)
        IF other.origin IN ('explicit', 'overlay')
           AND brain._terms_differ(brain._terms_of(other.fact_terms, other.headline, other.body), mine) THEN
            theirs := brain._terms_of(other.fact_terms, other.headline, other.body);
            RETURN jsonb_build_object(
                'id', other.memory_id, 'headline', other.headline, 'similarity', round(near.similarity::numeric, 3),
                'created_at', other.created_at,
                'terms', jsonb_build_object(
                    'this', to_jsonb(ARRAY(SELECT t FROM unnest(mine) AS t WHERE NOT t = ANY (theirs))),
                    'that', to_jsonb(ARRAY(SELECT t FROM unnest(theirs) AS t WHERE NOT t = ANY (mine)))),
                'hint', format('#%s may say the same of another value. If #%s replaces it: brain supersede %s ... '
                               '(SQL: brain.supersede(old_id => %s, ...)).',
                               other.memory_id, mem.memory_id, other.memory_id, other.memory_id));
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION brain.related_memory IS
    'The memory a stored one may contradict or replace: the nearest active memory of its kind and project, at least the space''s related similarity, differing in distinguishing terms only (a number, a version, a name). {id, headline, similarity, created_at, terms: {this, that}, hint}; NULL when none. Reported by writes (Brain.remember, brain remember, the MCP remember tool); never refuses.';

-- The newest statement of another value of an authored fact, when one is newer
-- than it: the nearest active memory of its kind and project created after it,
-- differing in distinguishing terms only, an authored one as near as the space's
-- related similarity, a captured turn (a correction said in a session) at half
-- that, as search judges its results (newer_related). NULL when none, or the
-- memory has no vector in the active space. For lines shown without a query
-- (the boot's pinned facts).
-- Whether a memory of newer_project may be a newer statement of one of
-- older_project: the same project's, or a global one of either side (a global
-- fact is newer for every project's memories; a global memory's newer statement
-- may be any project's, the one a search or a boot reads). Search's older marks
-- (brain._search_statement) and the boot's (brain._newer_statement) ask it.
-- (No SET clause: inlined.)
CREATE OR REPLACE FUNCTION brain._newer_in_scope(older_project text, newer_project text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT newer_project = older_project OR older_project = '' OR newer_project = ''
$$;

-- When a memory's statement was made: a captured turn's own time (metadata.at, the
-- transcript's timestamp) when it reads as one and is not after the turn was stored,
-- else when the memory was written. A reply said before a fact but captured after it
-- is older than the fact, not newer.
CREATE OR REPLACE FUNCTION brain._said_at(origin text, metadata jsonb, created_at timestamptz)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    said timestamptz;
BEGIN
    IF origin <> 'observed' OR jsonb_typeof(metadata->'at') IS DISTINCT FROM 'string'
       OR metadata->>'at' !~ '^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}' THEN
        RETURN created_at;
    END IF;
    BEGIN
        said := (metadata->>'at')::timestamptz;
    EXCEPTION WHEN OTHERS THEN
        RETURN created_at;
    END;
    RETURN least(said, created_at);
END
$$;

-- A captured turn's text without the speaker its writer put in front ("User: ",
-- "Assistant: "), cut without a pattern: a write runs more than a backend keeps
-- compiled. (No SET clause: inlined into its callers.)
CREATE OR REPLACE FUNCTION brain._unspoken(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.substr(t, CASE WHEN pg_catalog.starts_with(t, 'User: ') THEN 7
                                     WHEN pg_catalog.starts_with(t, 'Assistant: ') THEN 12
                                     ELSE 1 END)
$$;

-- What a memory states, for brain._restates: a captured turn's text (without its
-- speaker), an authored memory's headline. (No SET clause: inlined.)
CREATE OR REPLACE FUNCTION brain._statement_text(origin text, headline text, body text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT brain._unspoken(CASE WHEN origin OPERATOR(pg_catalog.=) 'observed'
                                THEN coalesce(nullif(body, ''), headline) ELSE headline END)
$$;

-- The words of a statement that name what its values are of: each word that is
-- not one of its values (brain.distinguishing_terms: numbers, identifiers,
-- names) and stands more than two words away from every value. "The osprey
-- scheduler listens on port 7140 since the 9th.": osprey, scheduler, listens
-- ("port" and "since" go with "7140" and "the 9th"); "The billing service is
-- owned by Alice": billing, service. (No SET clause: inlined into its caller.)
CREATE OR REPLACE FUNCTION brain._naming_words(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(pg_catalog.array_agg(w.lexeme), '{}')
    -- (each value written as 0, so that the words near it are known by their places)
    FROM (SELECT pg_catalog.to_tsvector('english'::regconfig, CASE WHEN pg_catalog.cardinality(d.terms) OPERATOR(pg_catalog.=) 0 THEN t
                 ELSE pg_catalog.regexp_replace(t, '\m(' OPERATOR(pg_catalog.||) pg_catalog.array_to_string(ARRAY(
                          -- (a term is letters and digits joined by . _ / : @ + # ' -:
                          -- . and + are the ones a pattern reads otherwise)
                          SELECT pg_catalog.replace(pg_catalog.replace(x, '.', '\.'), '+', '\+')
                          FROM pg_catalog.unnest(d.terms) AS x), '|') OPERATOR(pg_catalog.||) ')\M', '0', 'gi') END) AS vec
          FROM (SELECT brain.distinguishing_terms(t) AS terms OFFSET 0) AS d) AS v  -- (its terms once)
    CROSS JOIN pg_catalog.unnest(v.vec) AS w
    -- (a value's lexeme holds a digit or one of . _ / : @ # -: looked for without a pattern)
    WHERE pg_catalog.translate(w.lexeme, '0123456789._/:@#-', '') OPERATOR(pg_catalog.=) w.lexeme
      AND NOT EXISTS (SELECT FROM pg_catalog.unnest(v.vec) AS x
                      CROSS JOIN pg_catalog.unnest(x.positions) AS xp(p) CROSS JOIN pg_catalog.unnest(w.positions) AS wp(p)
                      WHERE pg_catalog.translate(x.lexeme, '0123456789._/:@#-', '') OPERATOR(pg_catalog.<>) x.lexeme
                        AND pg_catalog.abs(xp.p OPERATOR(pg_catalog.-) wp.p) OPERATOR(pg_catalog.<=) 2)
$$;

-- A memory's naming words: those stored with it (brain.memory.naming_words,
-- migration 038), or, for a row written before that migration filled them,
-- computed from its statement (brain._statement_text). (No SET clause: inlined.)
CREATE OR REPLACE FUNCTION brain._naming_of(stored text[], statement text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(stored, brain._naming_words(statement))
$$;

-- The words a statement says a change of value with, which name nothing of what
-- changed ("We moved the card stub to port 4343", "Noted: … now"), as lexemes.
CREATE OR REPLACE FUNCTION brain._change_words()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT tsvector_to_array(to_tsvector('english'::regconfig,
        'noted moved changed switched bumped upgraded downgraded migrated updated replaced '
        'renamed relocated repointed pointed set use now actually instead rather '
        'today yesterday anymore longer'))
$$;

-- Naming words less those a change is said with (brain._change_words): what a
-- statement names of the thing whose value it gives.
CREATE OR REPLACE FUNCTION brain._naming_less_change(words text[])
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT unnest(words) EXCEPT SELECT unnest(brain._change_words()))
$$;

-- Whether a newer memory speaks of what an older one says, as a newer statement
-- of its value must: the older is a short statement (a turn's text, an
-- authored memory's headline, of prompt_subject_words words or fewer: a long
-- turn speaks of many things), and one of the two names nothing the other does
-- not (brain._naming_words): the newer holds every naming word of the older (a
-- correction said in conversation, "The osprey scheduler listens on port 7140
-- since the 9th." and later "Noted: the osprey scheduler listens on port 20022
-- now."; "Node 22." names nothing the newer could lack), or the older holds
-- every one of the newer, which names something ("The kestrel gateway listens
-- on port 5009", written after "Noted: the kestrel gateway listens on port
-- 20005 now."). "The osprey search indexer listens on port 6484" and "The
-- osprey scheduler listens on port 7140" each lack a word of the other: two
-- things' values, neither newer. The words a correction says a change with
-- (brain._change_words: "moved", "noted", "now"…) name nothing, in either of
-- the two: "We moved the card stub to port 4343 yesterday." restates "The
-- payment step's card stub listens on port 4242", whose words hold the
-- correction's card and stub, and a later "The card stub listens on port
-- 4444" restates the correction in turn.
-- Search and the boot (brain._newer_statement) ask it of a pair once the two
-- are near and their values differ. (Each memory's naming words are stored
-- with it, brain.memory.naming_words: computed here only when not.)
-- The same, of two statements given: each one's text (brain._statement_text),
-- its naming words, the newer's full-text vector, and the length of a short
-- statement (the setting prompt_subject_words). It reads no table: search
-- judges the pairs of its results with what it already holds.
CREATE OR REPLACE FUNCTION brain._restates_statement(older_text text, older_naming text[], newer_text text,
                                                     newer_naming text[], newer_tsv tsvector, short integer)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.word_count(older_text) <= short
           AND (brain._naming_less_change(older_naming) <@ tsvector_to_array(newer_tsv)
                OR brain.word_count(newer_text) <= short
                   AND cardinality(nb.words) > 0
                   AND nb.words <@ tsvector_to_array(to_tsvector('english'::regconfig, older_text)))
    FROM (SELECT brain._naming_less_change(newer_naming) AS words) AS nb
$$;

-- (PL/pgSQL: its statement is planned when first run, not when the function
-- files are applied, which may precede the migration of naming_words.)
CREATE OR REPLACE FUNCTION brain._restates(ws bigint, older bigint, newer bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (
    SELECT brain._restates_statement(a.text, brain._naming_of(o.naming_words, a.text),
                                     b.text, brain._naming_of(n.naming_words, b.text), n.tsv,
                                     (brain.setting('prompt_subject_words'))::integer)
    FROM brain.memory o
    JOIN brain.memory n ON n.workspace_id = ws AND n.memory_id = newer
    -- each one's statement, without the speaker a captured turn's text starts with
    CROSS JOIN LATERAL (SELECT brain._statement_text(o.origin, o.headline, o.body) AS text) AS a
    CROSS JOIN LATERAL (SELECT brain._statement_text(n.origin, n.headline, n.body) AS text) AS b
    WHERE o.workspace_id = ws AND o.memory_id = older);
END
$$;

-- scope: the project a boot shows the memory in; a global memory's newer
-- statement may be one of that project's too (as search judges its results).
-- memories: the workspace's (brain.lexical_corpus), read once by a boot for its
-- pinned lines; read here when not given.
DROP FUNCTION IF EXISTS brain._newer_statement(bigint, bigint);
DROP FUNCTION IF EXISTS brain._newer_statement(bigint, bigint, text);
CREATE OR REPLACE FUNCTION brain._newer_statement(ws bigint, id bigint, scope text DEFAULT '',
                                                  memories bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    space brain.embedding_space := brain.active_embedding_space();
    m brain.memory;
    vec public.vector;
    own text[];
    newer record;
BEGIN
    SELECT * INTO m FROM brain.memory x WHERE x.workspace_id = ws AND x.memory_id = id;
    IF m.memory_id IS NULL OR m.kind <> 'fact' OR m.origin NOT IN ('explicit', 'overlay') OR m.state <> 'active'
       OR space.space_id IS NULL THEN
        RETURN NULL;
    END IF;
    vec := brain._stored_vector(space, m.memory_id);
    IF vec IS NULL THEN
        RETURN NULL;
    END IF;
    -- the nearest newer statements, most similar first; the first whose terms differ from
    -- the fact's both ways (brain._distinct_facts) is the one: the fact's terms computed once,
    -- the others' only until one is found
    FOR newer IN SELECT x.memory_id, x.origin, brain._terms_of(x.fact_terms, x.headline, x.body) AS terms
             FROM (SELECT n.memory_id, n.origin, n.headline, n.body, n.fact_terms, k.similarity
                   -- (the nearest of the projects whose memories may be newer, in one
                   -- lookup: the fact's own, the global ones, the boot's for a global fact;
                   -- ranked exactly only where that costs less than the walk,
                   -- brain._exact_rank_kept's bound for ten of the workspace's memories)
                   FROM brain._nearest_k(space, vec, m.kind, ARRAY(
                            SELECT DISTINCT p.project FROM unnest(ARRAY[m.project, '', coalesce(scope, '')]) AS p(project)
                            WHERE brain._newer_in_scope(m.project, p.project)), m.memory_id, 10,
                            exact_below => brain._exact_rank_kept(10, coalesce(memories,
                                (SELECT sum(c.docs) FROM brain.lexical_corpus c WHERE c.workspace_id = ws)::bigint), 0, 3)) AS k
                   JOIN brain.memory n ON n.workspace_id = ws AND n.memory_id = k.memory_id
                   WHERE brain._said_at(n.origin, n.metadata, n.created_at) > m.created_at
                     AND NOT brain._is_flagged(n.flag_reasons, n.flag_confirmed_at)
                     AND CASE WHEN n.origin IN ('explicit', 'overlay') THEN k.similarity >= space.related
                              ELSE n.origin = 'observed' AND n.metadata ? 'turn'
                                   AND k.similarity >= space.related / 2 END) AS x
             ORDER BY x.similarity DESC, x.memory_id DESC
    LOOP
        own := coalesce(own, brain._terms_of(m.fact_terms, m.headline, m.body));
        IF brain._terms_differ(own, newer.terms) AND brain._restates(ws, m.memory_id, newer.memory_id) THEN
            RETURN newer.memory_id;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION brain.load_skill(name text, project text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_id bigint;
BEGIN
    SELECT m.memory_id INTO found_id
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger->>'name' = load_skill.name
      AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR (load_skill.project IS NOT NULL AND m.skill_trigger->'projects' ? load_skill.project));
    IF found_id IS NULL THEN
        PERFORM brain._raise('BR010', 'No active skill of that name here.',
            jsonb_build_object('fields', jsonb_build_array('name', 'project')),
            'Skills scoped to projects load only from those projects; superseded skills never load.');
    END IF;
    RETURN brain.recall(found_id);
END
$$;
COMMENT ON FUNCTION brain.load_skill IS
    'The active skill with this name (global, or scoped to the given project), recalled in full.';

CREATE OR REPLACE FUNCTION brain.list_recent(
    kinds text[] DEFAULT NULL,
    project text DEFAULT NULL,
    max_results integer DEFAULT 20,
    include_superseded boolean DEFAULT false,
    include_archived boolean DEFAULT false
)
RETURNS SETOF brain.memory_brief
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.preview(m.body), m.state,
           m.pinned, m.created_at
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace()
      AND (kinds IS NULL OR m.kind = ANY (kinds))
      AND (list_recent.project IS NULL OR m.project IN (list_recent.project, ''))
      AND (m.state = 'active' OR (include_superseded AND m.state = 'superseded')
           OR (include_archived AND m.state = 'archived'))
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT greatest(1, least(max_results, 500))
$$;
COMMENT ON FUNCTION brain.list_recent IS 'The newest memories, headlines and previews, filtered like search.';

CREATE OR REPLACE FUNCTION brain.list_skills(project text DEFAULT NULL)
RETURNS TABLE (name text, id bigint, headline text, keywords jsonb, projects jsonb, always_on boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.skill_trigger->>'name', m.memory_id, m.headline,
           coalesce(m.skill_trigger->'keywords', '[]'), coalesce(m.skill_trigger->'projects', '[]'),
           coalesce((m.skill_trigger->>'always_on')::boolean, false)
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger IS NOT NULL
      AND (list_skills.project IS NULL
           OR coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR m.skill_trigger->'projects' ? list_skills.project)
    ORDER BY 1
$$;
COMMENT ON FUNCTION brain.list_skills IS
    'Active skills (global, plus those scoped to the given project; all when project is NULL).';
