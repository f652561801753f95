CREATE SCHEMA brain;
CREATE TYPE brain.fact_detail AS (
	halflife_days double precision
);
CREATE TYPE brain.incident_detail AS (
	what_was_wrong text,
	what_is_correct text,
	error_message text,
	command_attempted text,
	related_files text[],
	complexity text
);
CREATE TYPE brain.memory_brief AS (
	id bigint,
	kind text,
	category text,
	project text,
	headline text,
	preview text,
	state text,
	pinned boolean,
	created_at timestamp with time zone
);
CREATE TYPE brain.rule_detail AS (
	severity text,
	prior_severity text
);
CREATE TYPE brain.task_detail AS (
	status text,
	priority integer,
	due_at timestamp with time zone,
	status_note text,
	status_changed_at timestamp with time zone
);
CREATE TYPE brain.memory_draft AS (
	kind text,
	headline text,
	body text,
	category text,
	origin text,
	project text,
	tags text[],
	importance double precision,
	pinned boolean,
	skill_trigger jsonb,
	metadata jsonb,
	embedding double precision[],
	embedding_space text,
	source_agent text,
	session_id bigint,
	source_system text,
	source_ref text,
	source_hash text,
	expires_at timestamp with time zone,
	supersedes bigint,
	foldable boolean,
	rule brain.rule_detail,
	fact brain.fact_detail,
	task brain.task_detail,
	incident brain.incident_detail,
	normalized text,
	people text[],
	topics text[],
	action_items text[],
	state text,
	upvotes integer,
	downvotes integer,
	access_count integer,
	last_accessed timestamp with time zone,
	superseded_at timestamp with time zone,
	supersede_reason text,
	last_confirmed_at timestamp with time zone,
	forget_reason text,
	dedup_pending boolean,
	record_version integer,
	created_at timestamp with time zone,
	updated_at timestamp with time zone,
	dormant_after timestamp with time zone,
	forgotten_at timestamp with time zone,
	archived_at timestamp with time zone,
	flag_reasons text[],
	flag_confirmed_at timestamp with time zone,
	flag_confirmed_by text,
	source_chunk integer,
	context text,
	thread text,
	"position" integer,
	sent text,
	vector public.vector
);
CREATE TYPE brain.search_request AS (
	query text,
	embedding public.vector,
	tsq tsquery,
	kinds text[],
	categories text[],
	project text,
	tags text[],
	people text[],
	created_after timestamp with time zone,
	created_before timestamp with time zone,
	include_superseded boolean,
	include_archived boolean,
	as_of timestamp with time zone,
	clock timestamp with time zone,
	source_system text,
	source_ref text,
	workspace_id bigint,
	max_results integer,
	neighbours integer,
	min_relevance double precision,
	rrf_k double precision,
	skill_trigger_max integer,
	vector_min_similarity double precision,
	words_ab tsquery[],
	words_c tsquery[],
	words_idf double precision[],
	bm25 double precision[],
	calibration double precision[],
	kept_ids bigint[],
	exact text[]
);
COMMENT ON TYPE brain.search_request IS 'The one parameter of the statement brain.search builds (brain._search_statement): the query, its embedding and words, the caller''s filters, the workspace and the settings the statement reads. Internal to search.';
CREATE TYPE brain.search_result AS (
	id bigint,
	kind text,
	category text,
	project text,
	headline text,
	preview text,
	score double precision,
	vector_rank integer,
	lexical_rank integer,
	fuzzy_rank integer,
	similarity real,
	state text,
	pinned boolean,
	superseded_by bigint,
	current_id bigint,
	via_skill_trigger text,
	created_at timestamp with time zone,
	flag_reasons text[],
	relevance real,
	source_system text,
	source_ref text,
	metadata jsonb,
	thread text,
	"position" integer,
	neighbour_of bigint,
	newer_related bigint,
	verdict real,
	stale jsonb
);
COMMENT ON COLUMN brain.search_result.newer_related IS 'A newer memory among the results that may contradict this one (same kind and project, related, differing in distinguishing terms only); NULL otherwise.';
COMMENT ON COLUMN brain.search_result.verdict IS 'The result''s relevance with the query''s words that no memory holds counted: search returns nothing unless some candidate''s verdict reaches min_relevance. NULL for a neighbour and a skill the ranking did not score.';
COMMENT ON COLUMN brain.search_result.stale IS 'When this memory states the old value of a superseded one: {"on": superseded id, "by": the id that replaced it, "values": the old values}; NULL otherwise.';
CREATE TYPE brain.session_brief AS (
	session_id bigint,
	source text,
	project text,
	cwd text,
	pid integer,
	host text,
	current_task text,
	started_at timestamp with time zone,
	heartbeat_at timestamp with time zone
);
CREATE TYPE brain.staged_memory AS (
	item integer,
	chunk integer,
	input jsonb,
	headline text,
	body text,
	normalized text,
	metadata jsonb,
	section text,
	source_ref text,
	source_hash text,
	flags text[],
	thread text,
	"position" integer,
	context text,
	said text,
	redacted jsonb,
	vector public.vector,
	error_code text,
	error text,
	existing bigint,
	first_of integer,
	stored_id bigint,
	action text,
	memory_id bigint,
	duplicate_of bigint,
	similarity real,
	previous_id bigint,
	previous_ref text,
	vectors integer
);
CREATE TYPE brain.write_result AS (
	action text,
	memory_id bigint,
	duplicate_of bigint,
	similarity real,
	embedding_pending boolean,
	embedding_input text
);
CREATE FUNCTION brain._access(ws bigint, role text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/migrations/015-tokens.sql
$$;
CREATE FUNCTION brain._acknowledges(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._age_text(at timestamp with time zone, now timestamp with time zone DEFAULT now()) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain._age_text(at timestamp with time zone, now timestamp with time zone) IS 'How long before now a time was, in one unit: 40s, 12m, 5h, 3d, 7w, 4mo, 2y (? for none).';
CREATE FUNCTION brain._aged(ws bigint, items jsonb, clock timestamp with time zone) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._analyze_lexemes_if_due() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
CREATE FUNCTION brain._answers_for_role(role text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/022-serve.sql
$$;
CREATE FUNCTION brain._api_frame(stack text) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004b-write-guard.sql
$$;
CREATE FUNCTION brain._ascii85_text(x text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$_$;
CREATE FUNCTION brain._asked_text(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005c-search-run.sql
$$;
COMMENT ON FUNCTION brain._asked_text(t text) IS 'What a query asks: the sentences ending in a question mark of a text of several sentences whose last one does; else the text. The search floor''s verdict counts the unheld words of this part only.';
CREATE FUNCTION brain._asks_replies(query text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005c-search-run.sql
$$;
COMMENT ON FUNCTION brain._asks_replies(query text) IS 'Whether a query asks what the other side of a conversation said ("you recommended", "did you suggest", "your suggestion", "what we outlined"): search then weighs an assistant''s captured turns as a person''s (assistant_turn_weight does not apply), and a captured prompt gives its place to the reply that answers it.';
CREATE FUNCTION brain._audit(id bigint, action text, actor text, detail jsonb DEFAULT '{}'::jsonb, checked boolean DEFAULT false) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._audit_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._audit_many(ids bigint[], action text, actor text, detail jsonb DEFAULT '{}'::jsonb, checked boolean DEFAULT false) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._authors(ws bigint, id bigint) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/018-safety.sql
$$;
CREATE FUNCTION brain._base32_text(x text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$_$;
CREATE FUNCTION brain.current_workspace() RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/025-tenancy.sql
$_$;
COMMENT ON FUNCTION brain.current_workspace() IS 'The workspace of this transaction: SET LOCAL brain.workspace = <id>, else the role''s only workspace. Raises BR020 when the connected role is not a member (or, choosing none, is a member of several).';
CREATE TABLE brain.embedding_space (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    space_id bigint NOT NULL,
    provider text NOT NULL,
    model text NOT NULL,
    dims integer NOT NULL,
    near_identical real DEFAULT 0.92 NOT NULL,
    related real DEFAULT 0.75 NOT NULL,
    state text DEFAULT 'building'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    activated_at timestamp with time zone,
    indexed_through bigint DEFAULT 0 NOT NULL,
    folded_through bigint DEFAULT 0 NOT NULL,
    fold_observed boolean DEFAULT true NOT NULL,
    max_tokens integer,
    relevance_center real DEFAULT 0.5 NOT NULL,
    relevance_slope real DEFAULT 20 NOT NULL,
    CONSTRAINT embedding_space_check CHECK ((related <= near_identical)),
    CONSTRAINT embedding_space_check1 CHECK ((folded_through <= indexed_through)),
    CONSTRAINT embedding_space_dims_check CHECK (((dims >= 1) AND (dims <= 16000))),
    CONSTRAINT embedding_space_indexed_through_check CHECK ((indexed_through >= 0)),
    CONSTRAINT embedding_space_max_tokens_check CHECK (((max_tokens >= 32) AND (max_tokens <= 1000000))),
    CONSTRAINT embedding_space_model_check CHECK ((btrim(model) <> ''::text)),
    CONSTRAINT embedding_space_near_identical_check CHECK (((near_identical > (0)::double precision) AND (near_identical <= (1)::double precision))),
    CONSTRAINT embedding_space_provider_check CHECK ((provider ~ '^[a-z][a-z0-9_-]*$'::text)),
    CONSTRAINT embedding_space_related_check CHECK (((related > (0)::double precision) AND (related <= (1)::double precision))),
    CONSTRAINT embedding_space_relevance_center_check CHECK (((relevance_center > ('-1'::integer)::double precision) AND (relevance_center < (1)::double precision))),
    CONSTRAINT embedding_space_relevance_slope_check CHECK (((relevance_slope > (0)::double precision) AND (relevance_slope <= (1000)::double precision))),
    CONSTRAINT embedding_space_state_check CHECK ((state = ANY (ARRAY['building'::text, 'active'::text, 'retired'::text])))
);
ALTER TABLE ONLY brain.embedding_space ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding_space ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding_space FORCE ROW LEVEL SECURITY;
COMMENT ON COLUMN brain.embedding_space.indexed_through IS 'The space''s HNSW index holds the vectors with ingest_seq up to this value; later ones are ranked exactly.';
COMMENT ON COLUMN brain.embedding_space.folded_through IS 'Vectors with ingest_seq up to this value have had their near-identical dedup.';
COMMENT ON COLUMN brain.embedding_space.fold_observed IS 'Near-identical folding of observed and artifact rows in this space; off: they are deduplicated exactly only.';
COMMENT ON COLUMN brain.embedding_space.max_tokens IS 'Tokens of text the model embeds (its window less its special tokens); NULL when unlimited or unknown. Chunks of observed text fit it.';
CREATE FUNCTION brain._batch_turn(space brain.embedding_space, n integer, kind text, project text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._best_pack(ws bigint, projects text[], s brain.embedding_space, vec public.vector, floor double precision) RETURNS TABLE(name text, similarity double precision, relevance double precision)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._boot_count(ws bigint, projects text[], severity text, cap integer) RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._boot_patterns_make(s brain.embedding_space) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/015-boot.sql
$_$;
CREATE FUNCTION brain._boot_patterns_name(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._boot_patterns_near(ws bigint, projects text[], s brain.embedding_space, vec public.vector, k integer, scope bigint) RETURNS TABLE(memory_id bigint, dist double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'strict_order'
    SET "hnsw.max_scan_tuples" TO '20000'
    SET enable_sort TO 'off'
    AS $_$
    -- the body: sql/functions/015-boot.sql
$_$;
CREATE FUNCTION brain._boot_patterns_sql(s brain.embedding_space, exact boolean) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/015-boot.sql
$_$;
CREATE FUNCTION brain._bootable(state text, skill_trigger jsonb, flag_reasons text[], flag_confirmed_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._bounded(field text, value text, max integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._build_space_index(space_id bigint) RETURNS brain.embedding_space
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._builtin_phrases() RETURNS TABLE(term text, lexemes text[], q tsquery)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ VALUES ('9 to 5', '{5,9}'::text[], '''9'' <2> ''5'''::tsquery), ('business hours', '{busi,hour}'::text[], '''busi'' <-> ''hour'''::tsquery), ('command line', '{command,line}'::text[], '''command'' <-> ''line'''::tsquery), ('continuous integration', '{continu,integr}'::text[], '''continu'' <-> ''integr'''::tsquery), ('end of life', '{end,life}'::text[], '''end'' <2> ''life'''::tsquery), ('load balancer', '{balanc,load}'::text[], '''load'' <-> ''balanc'''::tsquery), ('merge request', '{merg,request}'::text[], '''merg'' <-> ''request'''::tsquery), ('nine to five', '{five,nine}'::text[], '''nine'' <2> ''five'''::tsquery), ('office hours', '{hour,offic}'::text[], '''offic'' <-> ''hour'''::tsquery), ('pull request', '{pull,request}'::text[], '''pull'' <-> ''request'''::tsquery), ('schema change', '{chang,schema}'::text[], '''schema'' <-> ''chang'''::tsquery), ('schema update', '{schema,updat}'::text[], '''schema'' <-> ''updat'''::tsquery), ('time to live', '{live,time}'::text[], '''time'' <2> ''live'''::tsquery), ('user interface', '{interfac,user}'::text[], '''user'' <-> ''interfac'''::tsquery), ('virtual machine', '{machin,virtual}'::text[], '''virtual'' <-> ''machin'''::tsquery), ('work hours', '{hour,work}'::text[], '''work'' <-> ''hour'''::tsquery), ('working hours', '{hour,work}'::text[], '''work'' <-> ''hour'''::tsquery) $$;
CREATE FUNCTION brain._caller_workspace(need text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
CREATE FUNCTION brain._change_words() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._changed_values(this_text text, other_text text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE TABLE brain.memory (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    kind text NOT NULL,
    category text DEFAULT 'note'::text NOT NULL,
    origin text DEFAULT 'explicit'::text NOT NULL,
    project text DEFAULT ''::text NOT NULL,
    headline text NOT NULL,
    body text DEFAULT ''::text NOT NULL,
    normalized text NOT NULL,
    normalized_hash uuid GENERATED ALWAYS AS ((md5(normalized))::uuid) STORED,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    people text[] DEFAULT '{}'::text[] NOT NULL,
    topics text[] DEFAULT '{}'::text[] NOT NULL,
    action_items text[] DEFAULT '{}'::text[] NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    state text DEFAULT 'active'::text NOT NULL,
    pinned boolean DEFAULT false NOT NULL,
    skill_trigger jsonb,
    importance real DEFAULT 0.5 NOT NULL,
    upvotes integer DEFAULT 0 NOT NULL,
    downvotes integer DEFAULT 0 NOT NULL,
    access_count integer DEFAULT 0 NOT NULL,
    last_accessed timestamp with time zone,
    source_agent text,
    session_id bigint,
    source_system text,
    source_ref text,
    source_hash text,
    supersedes bigint,
    superseded_by bigint,
    superseded_at timestamp with time zone,
    supersede_reason text,
    expires_at timestamp with time zone,
    last_confirmed_at timestamp with time zone,
    forget_reason text,
    replaced_by bigint,
    dedup_pending boolean DEFAULT false NOT NULL,
    record_version integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    tsv tsvector,
    dormant_after timestamp with time zone,
    forgotten_at timestamp with time zone,
    archived_at timestamp with time zone,
    foldable boolean DEFAULT true NOT NULL,
    flag_reasons text[] DEFAULT '{}'::text[] NOT NULL,
    flag_confirmed_at timestamp with time zone,
    flag_confirmed_by text,
    source_chunk integer,
    context text,
    thread text,
    "position" integer,
    lexical_len integer,
    fact_terms text[],
    naming_words text[],
    CONSTRAINT memory_category_check CHECK ((category = ANY (ARRAY['decision'::text, 'idea'::text, 'meeting'::text, 'person'::text, 'insight'::text, 'journal'::text, 'reference'::text, 'procedural'::text, 'episodic'::text, 'learning'::text, 'gotcha'::text, 'action'::text, 'feature_request'::text, 'note'::text]))),
    CONSTRAINT memory_check CHECK (((state = 'superseded'::text) = (superseded_by IS NOT NULL))),
    CONSTRAINT memory_headline_check CHECK ((btrim(headline) <> ''::text)),
    CONSTRAINT memory_importance_check CHECK (((importance >= (0)::double precision) AND (importance <= (1)::double precision))),
    CONSTRAINT memory_kind_check CHECK ((kind = ANY (ARRAY['rule'::text, 'fact'::text, 'incident'::text, 'task'::text, 'trajectory'::text]))),
    CONSTRAINT memory_origin_check CHECK ((origin = ANY (ARRAY['explicit'::text, 'artifact'::text, 'observed'::text, 'overlay'::text]))),
    CONSTRAINT memory_source_chunk_check CHECK ((source_chunk >= 1)),
    CONSTRAINT memory_state_check CHECK ((state = ANY (ARRAY['active'::text, 'superseded'::text, 'archived'::text, 'tombstoned'::text])))
);
ALTER TABLE ONLY brain.memory ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.memory ALTER COLUMN tsv SET STATISTICS 1000;
ALTER TABLE ONLY brain.memory FORCE ROW LEVEL SECURITY;
COMMENT ON COLUMN brain.memory.foldable IS 'false when the write that stored it switched near-identical folding off: no later dedup folds it.';
COMMENT ON COLUMN brain.memory.source_chunk IS 'An ingested chunk''s position in its document (1 = first); NULL for memories not written by brain.ingest_documents.';
COMMENT ON COLUMN brain.memory.context IS 'Indexed with the memory (full text, weight C) but not its text: speaker, date, neighbouring turns, title and heading path.';
COMMENT ON COLUMN brain.memory.thread IS 'The conversation or document the memory is part of (NULL: none).';
COMMENT ON COLUMN brain.memory."position" IS 'Its place in the thread: turn number, or chunk number of a document.';
COMMENT ON COLUMN brain.memory.lexical_len IS 'Distinct lexemes of headline and body: the document length of BM25.';
COMMENT ON COLUMN brain.memory.fact_terms IS 'The distinguishing terms of headline and body (brain.distinguishing_terms), kept by the write path: what tells one fact from another.';
COMMENT ON COLUMN brain.memory.naming_words IS 'The words of what the memory states (a captured turn''s text without its speaker, an authored memory''s headline) that name what its values are of (brain._naming_words), kept by the write path: what brain._restates compares.';
CREATE FUNCTION brain._changing(id bigint, action text, reason text, needs text, example text) RETURNS brain.memory
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
CREATE FUNCTION brain._check_at_commit(id bigint, space_id bigint, on_related text, lookup pg_snapshot) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._check_count(arg text, given integer, most integer, hint text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
CREATE FUNCTION brain._check_drafts(drafts brain.memory_draft[], p_on_related text DEFAULT 'refuse'::text, p_reason text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/004-write.sql
$_$;
CREATE FUNCTION brain._check_handoff(handoff text, snapshot jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._check_length(field text, value text, max integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._check_memory_sizes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._check_role_name(name text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/025-tenancy.sql
$_$;
CREATE FUNCTION brain._check_setting_argument(setting text, argument text, value numeric, what text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._check_setting_range(name text, value jsonb) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._check_sizes() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._check_transition(mem brain.memory, action text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
CREATE FUNCTION brain._check_turns(turns jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._check_vector(embedding double precision[], s brain.embedding_space) RETURNS public.vector
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._check_write_allowed(session bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._chunk_tokens(space text) RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._claim_objects() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/026-ownership.sql
$$;
CREATE FUNCTION brain._clean_observed(t text, OUT cleaned text, OUT redacted jsonb, OUT signals text[]) RETURNS record
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
CREATE FUNCTION brain._clock(now timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
CREATE FUNCTION brain._commit_check() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._common_words() RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._count_corpus(ws bigint, docs bigint, lexemes bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
CREATE FUNCTION brain._count_corpus_rows() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
CREATE FUNCTION brain._counted(n text, noun text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._declared_traits() RETURNS TABLE(name text, trait text)
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025a-tenancy-catalogue.sql
$$;
CREATE FUNCTION brain._default_workspace(role text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/migrations/013-tenancy.sql
$$;
CREATE FUNCTION brain._delete_embedding_failures(space_id bigint, ids bigint[] DEFAULT NULL::bigint[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._delete_embeddings(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._delete_memories(ids bigint[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._delete_request_answers(before timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._delete_setting(name text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._delete_stale_marks(changed_id bigint, change_id bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._deleting_workspace(stack text, what text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004d-write-deletes.sql
$$;
CREATE FUNCTION brain._distinct_facts(a text, b text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._distinct_ids(ids bigint[]) RETURNS bigint[]
    LANGUAGE sql IMMUTABLE
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._doc_bad_field(doc jsonb) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020a-transfer-import.sql
$$;
CREATE FUNCTION brain._doc_texts(doc jsonb, field text) RETURNS text[]
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020a-transfer-import.sql
$$;
CREATE FUNCTION brain._doc_time(doc jsonb, field text, clamp boolean DEFAULT true) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020a-transfer-import.sql
$$;
CREATE FUNCTION brain._dormant_after(last_touch timestamp with time zone, halflife_days double precision) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._draft(kind text, headline text, body text DEFAULT ''::text, category text DEFAULT NULL::text, origin text DEFAULT 'explicit'::text, project text DEFAULT ''::text, tags text[] DEFAULT '{}'::text[], importance double precision DEFAULT NULL::double precision, pinned boolean DEFAULT false, skill_trigger jsonb DEFAULT NULL::jsonb, metadata jsonb DEFAULT '{}'::jsonb, embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, source_agent text DEFAULT NULL::text, session_id bigint DEFAULT NULL::bigint, source_system text DEFAULT NULL::text, source_ref text DEFAULT NULL::text, source_hash text DEFAULT NULL::text, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, supersedes bigint DEFAULT NULL::bigint) RETURNS brain.memory_draft
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._draft_details(d brain.memory_draft, severity text, halflife_days double precision, status text, priority integer, due_at timestamp with time zone, what_was_wrong text, what_is_correct text, error_message text, command_attempted text, related_files text[], complexity text) RETURNS brain.memory_draft
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._drop_replaced_indexes(space_id bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._embedded_title(title text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._embedding_failures() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
CREATE FUNCTION brain._embedding_pattern_rule() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._embedding_title(origin text, metadata jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
CREATE FUNCTION brain._encoded_signals(t text) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
CREATE FUNCTION brain._ended_since(s pg_snapshot) RETURNS boolean
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._entropy(t text) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001a-text-secret-rules.sql
$$;
CREATE FUNCTION brain._exact_duplicate(kind text, project text, normalized text, embedding_input text) RETURNS brain.write_result
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._exact_nearest_sql(s brain.embedding_space, target text, filter text, lim text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/003b-embedding-nearest.sql
$_$;
CREATE FUNCTION brain._exact_rank_kept(candidates integer, n_docs bigint, exact_rows integer, coefficient double precision DEFAULT 4) RETURNS integer
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._exact_rank_rows() RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._field_text(v jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001b-text-clean.sql
$_$;
CREATE FUNCTION brain._first_verdict(item brain.memory, ids bigint[], sims real[], s brain.embedding_space, on_related text DEFAULT NULL::text) RETURNS TABLE(kept brain.memory, similarity real, verdict text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._first_words(line text, max_words integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._fold_indexed(s brain.embedding_space, max_rows integer) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._fold_into(mem brain.memory, target bigint, similarity real, vec public.vector, space_id bigint, actor text DEFAULT NULL::text) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._fold_item(target bigint, item brain.memory, similarity real, vec public.vector, space_id bigint, actor text, audit_detail jsonb) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._fold_near_identical(s brain.embedding_space, ids bigint[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._folds(id bigint) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
CREATE FUNCTION brain._follows_lifecycle() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
CREATE FUNCTION brain._forget_request_keys(clock timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004c-write-requests.sql
$$;
CREATE FUNCTION brain._full_xid(x xid) RETURNS xid8
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._gate(kind text, headline text, body text, severity text, category text, origin text, extra_text text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._gate_restored() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
COMMENT ON FUNCTION brain._gate_restored() IS 'A restored database''s rows through the gate, as an import''s (brain restore, as the superuser, before the database takes the target''s place): secrets redacted in every stored text, memories whose text shows injection signals flagged, unconfirmed, unpinned and without votes, an audit row per memory changed. Returns what it changed: memories by id (fields and kinds redacted, flags added, what was cleared) and other texts redacted, counted per column; never a value.';
CREATE FUNCTION brain._get_memory(id bigint, lock boolean DEFAULT false) RETURNS brain.memory
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
CREATE TABLE brain.pack (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    pack_id bigint NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    project text DEFAULT ''::text NOT NULL,
    query text,
    filters jsonb DEFAULT '{}'::jsonb NOT NULL,
    memory_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    token_budget integer NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    members bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    space_id bigint,
    embedding public.vector,
    state text DEFAULT 'active'::text NOT NULL,
    created_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    dropped_at timestamp with time zone,
    CONSTRAINT pack_check CHECK (((query IS NOT NULL) OR (cardinality(memory_ids) > 0))),
    CONSTRAINT pack_check1 CHECK (((embedding IS NULL) = (space_id IS NULL))),
    CONSTRAINT pack_filters_check CHECK ((jsonb_typeof(filters) = 'object'::text)),
    CONSTRAINT pack_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'::text)),
    CONSTRAINT pack_state_check CHECK ((state = ANY (ARRAY['active'::text, 'dropped'::text]))),
    CONSTRAINT pack_token_budget_check CHECK (((token_budget >= 50) AND (token_budget <= 20000))),
    CONSTRAINT pack_version_check CHECK ((version >= 1))
);
ALTER TABLE ONLY brain.pack ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.pack ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE ONLY brain.pack FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.pack IS 'Context packs: a named definition (query and filters, or memory ids, and a token budget) rendered by brain.render_pack; version moves when the definition or its members change. members: the ids of its last rendering.';
CREATE FUNCTION brain._get_pack(name text) RETURNS brain.pack
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE TABLE brain.session (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    session_id bigint NOT NULL,
    source text NOT NULL,
    project text DEFAULT ''::text NOT NULL,
    cwd text,
    pid integer,
    pid_started_at timestamp with time zone,
    host text,
    client_info jsonb DEFAULT '{}'::jsonb NOT NULL,
    current_task text,
    status text DEFAULT 'active'::text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    heartbeat_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    end_reason text,
    handoff text,
    snapshot jsonb,
    CONSTRAINT session_check CHECK (((status = 'ended'::text) = (ended_at IS NOT NULL))),
    CONSTRAINT session_source_check CHECK ((source ~ '^\S+$'::text)),
    CONSTRAINT session_status_check CHECK ((status = ANY (ARRAY['active'::text, 'ended'::text])))
);
ALTER TABLE ONLY brain.session ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.session FORCE ROW LEVEL SECURITY;
CREATE FUNCTION brain._get_session(id bigint) RETURNS brain.session
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._grant_workspace(role text, workspace_id bigint, access text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._handoff_gist(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._handoff_quote(t text, chars integer) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._handoff_time(s brain.session, own text, written timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._handoff_unchanged(source text, project text, handoff text, snapshot jsonb, exclude_session bigint, clock timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._hex_int(h text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$_$;
CREATE FUNCTION brain._hide_index_sizes() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/026-ownership.sql
$$;
CREATE FUNCTION brain._hide_workspace_sizes() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/026-ownership.sql
$$;
CREATE FUNCTION brain._hnsw_index_sql(name text, dims integer, predicate text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._holds_subject(ws bigint, ids bigint[], words tsquery[], idf double precision[], slack double precision, lacking integer) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
CREATE FUNCTION brain._import_document(item integer, d jsonb, source text, project text, semantic_dedup boolean, v_trust boolean, v_label text) RETURNS SETOF brain.staged_memory
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/020a-transfer-import.sql
$_$;
CREATE FUNCTION brain._import_trajectory(id bigint, d jsonb, trusted boolean) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._in_scope(ref text, scope text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/021-ingest.sql
$$;
CREATE FUNCTION brain._in_setting_range(name text, value jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._info_time(info jsonb, key text) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/014-sessions.sql
$_$;
CREATE FUNCTION brain._insert_trajectory(id bigint, t jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._insert_waiting(s brain.embedding_space, max_rows integer, wait boolean, also_kind text DEFAULT NULL::text, also_project text DEFAULT NULL::text, OUT indexed integer, OUT folded integer) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._is_flagged(flag_reasons text[], flag_confirmed_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
CREATE FUNCTION brain._is_owner() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._is_pattern_rule(ws bigint, id bigint) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._keep_answer(request_key text, answer jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004c-write-requests.sql
$$;
CREATE FUNCTION brain._kept_share_sample_rows() RETURNS integer
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._known_calibration(provider text, model text) RETURNS TABLE(near_identical real, related real, relevance_center real, relevance_slope real)
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._known_max_tokens(provider text, model text) RETURNS integer
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._last_handoff(project text, source text, exclude_session bigint, clock timestamp with time zone) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._last_turn_at(turns jsonb) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._lexeme_shares(ws bigint, lexemes text[]) RETURNS TABLE(lexeme text, share double precision, listed boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
CREATE FUNCTION brain._lexical_terms(query text, ws bigint, cfg jsonb, n_docs double precision) RETURNS TABLE(lexeme text, docs bigint, idf double precision, searched boolean, grp text[])
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET enable_indexscan TO 'off'
    AS $_$
    -- the body: sql/functions/005a-search-words.sql
$_$;
CREATE FUNCTION brain._line_age(ws bigint, id bigint) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._line_tokens(t text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._lock_commits(kind text, project text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._lock_indexer(s brain.embedding_space, wait boolean) RETURNS brain.embedding_space
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._lock_key(ws bigint, what text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
CREATE FUNCTION brain._lock_near(s brain.embedding_space, kind text, project text, ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._lock_writes(kind text, project text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._lock_writes_of(ids bigint[], also_kind text DEFAULT NULL::text, also_project text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._lock_writes_shared(kind text, project text) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._mark_dependents(old brain.memory, new_id bigint) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._mark_superseded(old brain.memory, new_id bigint, reason text, source text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._match_window(body text, query text, max_chars integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._may_be_pattern_rule(kind text, state text, skill_trigger jsonb, flag_reasons text[], flag_confirmed_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._may_fold(kept brain.memory, item brain.memory, s brain.embedding_space) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._memory_docs(ids bigint[]) RETURNS TABLE(memory_id bigint, doc jsonb)
    LANGUAGE sql STABLE
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._memory_terms(m brain.memory) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._memory_tsv() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
CREATE FUNCTION brain._merged_tags(existing text[], full_text text, tags text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._more_line(more jsonb, dropped jsonb, budget integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._names_pair(held bigint[], pair_a integer[], pair_b integer[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
CREATE FUNCTION brain._naming_less_change(words text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._naming_of(stored text[], statement text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._naming_words(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._near_trajectories(ws bigint, projects text[], s brain.embedding_space, vec public.vector, k integer, floor double precision) RETURNS TABLE(memory_id bigint, headline text, steps integer, similarity double precision, relevance double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/024a-trajectories-record.sql
$$;
CREATE FUNCTION brain._near_verdict(kept brain.memory, item brain.memory, similarity real, s brain.embedding_space, on_related text DEFAULT NULL::text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004e-write-folds.sql
$$;
CREATE FUNCTION brain._near_write(s brain.embedding_space, v public.vector, kind text, project text, exclude_id bigint, min_similarity real) RETURNS TABLE(memory_id bigint, similarity real, decides boolean)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'strict_order'
    SET "hnsw.max_scan_tuples" TO '20000'
    SET enable_sort TO 'off'
    AS $_$
    -- the body: sql/functions/003b-embedding-nearest.sql
$_$;
CREATE FUNCTION brain._nearest_k(s brain.embedding_space, v public.vector, kind text, projects text[], exclude_id bigint, k integer, exact_below integer DEFAULT NULL::integer) RETURNS TABLE(memory_id bigint, similarity real)
    LANGUAGE plpgsql STABLE ROWS 5
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'strict_order'
    SET "hnsw.max_scan_tuples" TO '20000'
    SET enable_sort TO 'off'
    AS $_$
    -- the body: sql/functions/003b-embedding-nearest.sql
$_$;
CREATE FUNCTION brain._nearest_older(s brain.embedding_space, ids bigint[], kind text, project text, waiting boolean DEFAULT true) RETURNS TABLE(memory_id bigint, nearest bigint, similarity real)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'strict_order'
    SET "hnsw.ef_search" TO '20'
    SET enable_sort TO 'off'
    AS $_$
    -- the body: sql/functions/003b-embedding-nearest.sql
$_$;
CREATE FUNCTION brain._nearest_sql(s brain.embedding_space, target text, joins text, filter text, lim integer, waiting boolean DEFAULT true) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/003b-embedding-nearest.sql
$_$;
CREATE FUNCTION brain._newer_in_scope(older_project text, newer_project text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._newer_statement(ws bigint, id bigint, scope text DEFAULT ''::text, memories bigint DEFAULT NULL::bigint) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._note_cites(t text, session bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._note_use(ids bigint[], how text, session bigint DEFAULT NULL::bigint) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._nothing_to_supersede(kind text, project text, origin text, space brain.embedding_space, vec public.vector, near_ids bigint[], near_sims real[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/007-revise.sql
$_$;
CREATE FUNCTION brain._notify_sessions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
CREATE FUNCTION brain._observed_context(meta jsonb, given text, section text, before text, after text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010a-observe-batch.sql
$$;
CREATE FUNCTION brain._only_asks(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._only_asks_turn(metadata jsonb, headline text, body text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._pack_embedding_input(name text, description text, query text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._pack_follow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._pack_members(p brain.pack) RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._pack_signals(description text, query text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
CREATE FUNCTION brain._pattern_index_name(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._pattern_index_sql(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._pending_embedding_count() RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
CREATE FUNCTION brain._principals(login text, set_role text) RETURNS text[]
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/018-safety.sql
$$;
CREATE FUNCTION brain._private_left_open(t text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._project_holding(q tsquery, project text) RETURNS SETOF bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._prompt_subject(prompt text, project text, OUT words tsquery[], OUT idf double precision[], OUT inside boolean[], OUT outside boolean[], OUT unnamed boolean, OUT pair_a integer[], OUT pair_b integer[]) RETURNS record
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
CREATE FUNCTION brain._query_phrases(query text, own jsonb, builtin boolean) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
CREATE FUNCTION brain._raise(code text, message text, detail jsonb, hint text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
COMMENT ON FUNCTION brain._raise(code text, message text, detail jsonb, hint text) IS 'Raises a pybrain error: SQLSTATE class BR, a message, a JSON DETAIL and a HINT (docs/errors.md).';
CREATE FUNCTION brain._redact_json(v jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
CREATE FUNCTION brain._refresh_dormancy(id bigint) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._refuse_secrets(fields jsonb, outcome text DEFAULT 'nothing was stored'::text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
CREATE FUNCTION brain._remote_key(url text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019c-hooks-projects.sql
$_$;
CREATE FUNCTION brain._repository_keys(identities text[]) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019c-hooks-projects.sql
$_$;
CREATE FUNCTION brain._request_answer(request_key text, function_name text, arguments jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004c-write-requests.sql
$$;
CREATE TABLE brain.workspace (
    workspace_id bigint NOT NULL,
    organization_id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY brain.workspace ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.workspace FORCE ROW LEVEL SECURITY;
CREATE FUNCTION brain._require_admin(ws bigint) RETURNS brain.workspace
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._require_owner(what text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._require_text(given text, code text, message text, hint text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
CREATE FUNCTION brain._resolve_space(space text) RETURNS brain.embedding_space
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._restates(ws bigint, older bigint, newer bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._restates_statement(older_text text, older_naming text[], newer_text text, newer_naming text[], newer_tsv tsvector, short integer) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._role_access(ws bigint, role text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/022-serve.sql
$$;
CREATE FUNCTION brain._role_plan(name text, workspace_id bigint, access text DEFAULT 'write'::text, password text DEFAULT NULL::text, statement_timeout text DEFAULT '5s'::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._rot13_hints() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
CREATE FUNCTION brain._rot47_hints() RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
CREATE FUNCTION brain._rotated(t text, how text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001b-text-clean.sql
$_$;
CREATE FUNCTION brain._rotated_hints() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
CREATE FUNCTION brain._rule_is_immutable() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
CREATE FUNCTION brain._rule_severity_follows_supersede() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
CREATE FUNCTION brain._said_at(origin text, metadata jsonb, created_at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._same_terms(a text, b text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._scan_rules(t text, hinted_only boolean DEFAULT false, OUT rules integer[], OUT kinds text[], OUT starts integer[], OUT ends integer[]) RETURNS record
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001a-text-secret-rules.sql
$$;
CREATE FUNCTION brain._scope_key(salt text, kind text, project text, part bigint DEFAULT NULL::bigint) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._scope_salt(ws bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003a-embedding-locks.sql
$$;
CREATE FUNCTION brain._scratch_scope(session bigint, project text, OUT scope text, OUT scope_key text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014a-sessions-scratch.sql
$$;
CREATE FUNCTION brain._search_bm25(memories text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005-search.sql
$_$;
CREATE FUNCTION brain._search_filter() RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005-search.sql
$_$;
CREATE FUNCTION brain._search_fuzzy_leg() RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005b-search-statement.sql
$_$;
CREATE FUNCTION brain._search_kept(req brain.search_request, most integer, n_docs bigint, walk_above double precision, OUT kept integer, OUT kept_ids bigint[]) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    SET enable_seqscan TO 'off'
    SET jit TO 'off'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._search_ranked(req brain.search_request, vector_ids bigint[], vector_sims double precision[], search_space bigint, run_fuzzy boolean, run_skills boolean, leg_rows integer, lexical_rows integer, thread_most integer, thread_decay double precision, assistant_weight double precision, related_similarity double precision, replies_asked boolean) RETURNS SETOF brain.search_result
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    SET jit TO 'off'
    SET "pg_trgm.word_similarity_threshold" TO '0.5'
    AS $_$
    -- the body: sql/functions/005b-search-statement.sql
$_$;
CREATE FUNCTION brain._search_statement() RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005b-search-statement.sql
$_$;
CREATE FUNCTION brain._search_vector_all(req brain.search_request, space bigint, candidates integer) RETURNS TABLE(memory_id bigint, r bigint, sim real, similarity double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._search_vector_function(name text, params text, statement text, settings text DEFAULT ''::text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._search_vector_hnsw_sql(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._search_vector_kept(req brain.search_request, space bigint, candidates integer) RETURNS TABLE(memory_id bigint, r bigint, sim real, similarity double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._search_vector_leg(s brain.embedding_space, kept integer, n_docs bigint, candidates integer) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005e-search-vector.sql
$$;
CREATE FUNCTION brain._search_vector_make(s brain.embedding_space) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005e-search-vector.sql
$$;
CREATE FUNCTION brain._search_vector_name(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005e-search-vector.sql
$$;
CREATE FUNCTION brain._search_vector_ranked(nearest text, candidates text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005e-search-vector.sql
$_$;
CREATE FUNCTION brain._secret_candidate_ok(check_name text, v text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001a-text-secret-rules.sql
$_$;
CREATE FUNCTION brain._secret_decode(x text, how text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$_$;
CREATE FUNCTION brain._secret_rule_column(col text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001a-text-secret-rules.sql
$$;
CREATE FUNCTION brain._secret_stretch(how text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$_$;
CREATE FUNCTION brain._secret_variant(t text, how text, OUT v text, OUT os integer[], OUT ol integer[], OUT ds integer[], OUT dl integer[], OUT plain boolean[]) RETURNS record
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001d-text-secret-decoding.sql
$$;
CREATE FUNCTION brain._section_headline(path text[], max_tokens integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._section_tokens(items jsonb, heading text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._session() RETURNS bigint
    LANGUAGE sql STABLE
    AS $_$
    -- the body: sql/functions/024-trajectories.sql
$_$;
CREATE FUNCTION brain._sessions_channel(ws bigint) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
CREATE FUNCTION brain._set_pinned(id bigint, value boolean, source text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
CREATE FUNCTION brain._settings() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._space_index_name(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._space_index_sql(s brain.embedding_space) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain._space_indexes(space_id bigint) RETURNS TABLE(indexname text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
CREATE FUNCTION brain._speaks_of_stated(ws bigint, ids bigint[], prompt text, naming text[], said tsvector, short integer) RETURNS boolean
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
CREATE FUNCTION brain._split_block(lines text[], head_lines integer, fenced boolean, room integer) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._stage_document(doc brain.staged_memory, source_system text, project text, chunk_tokens integer, seen jsonb, doomed bigint[], base integer) RETURNS SETOF brain.staged_memory
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
    -- the body: sql/functions/021-ingest.sql
$$;
CREATE FUNCTION brain._stage_observed(item integer, said text, kind text, origin text, source_ref text, metadata jsonb, context text, thread text, "position" integer, chunk_tokens integer) RETURNS SETOF brain.staged_memory
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
    -- the body: sql/functions/010a-observe-batch.sql
$$;
CREATE FUNCTION brain._stage_vectors(staged brain.staged_memory[], embeddings double precision[], space brain.embedding_space, places integer[] DEFAULT NULL::integer[]) RETURNS brain.staged_memory[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._stale_line(ws bigint, id bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._stale_mark_text(changed_id bigint, change_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._stale_of(ws bigint, id bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._stated_elsewhere(q tsquery, project text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
CREATE FUNCTION brain._statement_text(origin text, headline text, body text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._steps_text(steps jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._store_handoff(source text, project text, session bigint, handoff text, snapshot jsonb, clock timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._store_memories(items brain.memory_draft[], space_id bigint DEFAULT NULL::bigint, ingest_seq bigint DEFAULT NULL::bigint, audit jsonb DEFAULT NULL::jsonb, check_at_commit jsonb DEFAULT NULL::jsonb, vectors_later boolean DEFAULT false) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._store_vectors(ids bigint[], vectors public.vector[], space_id bigint, ingest_seq bigint DEFAULT 0, replace boolean DEFAULT false) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/004a-write-core.sql
$$;
CREATE FUNCTION brain._stored_vector(s brain.embedding_space, id bigint) RETURNS public.vector
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._sweep_sessions(now timestamp with time zone, host text DEFAULT NULL::text, host_processes jsonb DEFAULT NULL::jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/014-sessions.sql
$_$;
CREATE FUNCTION brain._sync_pattern_rule() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
CREATE FUNCTION brain._terms_differ(ta text[], tb text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._terms_of(stored text[], headline text, body text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
CREATE FUNCTION brain._titled_chunk_tokens(max_tokens integer, title text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
CREATE FUNCTION brain._token_hash(token text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/022-serve.sql
$_$;
CREATE FUNCTION brain._touch_session(id bigint, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE sql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
CREATE FUNCTION brain._trajectory_steps(steps jsonb, redact boolean DEFAULT false) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
CREATE FUNCTION brain._turn_answer(ws bigint, id bigint, OUT answer_id bigint, OUT answer text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019-hooks.sql
$_$;
CREATE FUNCTION brain._turn_prompt(ws bigint, id bigint, OUT prompt_id bigint, OUT text text) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019-hooks.sql
$_$;
CREATE FUNCTION brain._turn_signals(t text, meta jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
CREATE FUNCTION brain._turn_text(ws bigint, id bigint, OUT turn_id bigint, OUT text text) RETURNS record
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
CREATE FUNCTION brain._undecaying(origin text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
CREATE FUNCTION brain._unmark_dependents(changed_id bigint, change_id bigint) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
CREATE FUNCTION brain._unspoken(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
CREATE FUNCTION brain._waiting_vectors(s brain.embedding_space) RETURNS TABLE(memory_id bigint, ingest_seq bigint)
    LANGUAGE sql STABLE
    AS $$
    -- the body: sql/functions/003b-embedding-nearest.sql
$$;
CREATE FUNCTION brain._workspace(id bigint) RETURNS brain.workspace
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
CREATE FUNCTION brain._write(d brain.memory_draft, p_check_only boolean, p_on_related text DEFAULT 'refuse'::text, p_reason text DEFAULT NULL::text) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/004a-write-core.sql
$_$;
CREATE FUNCTION brain._write_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004b-write-guard.sql
$$;
CREATE FUNCTION brain._write_space(space text) RETURNS brain.embedding_space
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
CREATE FUNCTION brain.acknowledge_action_item(id bigint, session bigint, response text, note text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.acknowledge_action_item(id bigint, session bigint, response text, note text) IS 'Answers an action item (will_execute, already_done, not_relevant), which releases the writes it blocked.';
CREATE FUNCTION brain.activate_embedding_space(embedding_space text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
COMMENT ON FUNCTION brain.activate_embedding_space(embedding_space text) IS 'Makes a fully embedded space the active one (writes and searches use it from the next statement); the previous one is retired. Refused while embeddings are missing.';
CREATE FUNCTION brain.active_embedding_space() RETURNS brain.embedding_space
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/003-embedding.sql
$$;
COMMENT ON FUNCTION brain.active_embedding_space() IS 'The embedding space that writes and searches use in this workspace (NULL fields when none is registered).';
CREATE FUNCTION brain.adopt_role(name text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/026-ownership.sql
$$;
COMMENT ON FUNCTION brain.adopt_role(name text) IS 'Lets brain_server become an application role (SET, not its privileges), so that brain.create_token can make tokens of it (the installer only: a superuser, or a role with ADMIN on it). brain.create_role, brain.grant_workspace by the installer and every migrate do it; a role made by hand and enrolled by a workspace admin needs it once.';
CREATE FUNCTION brain.analyze_lexemes(sample_size integer DEFAULT 30000) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.analyze_lexemes(sample_size integer) IS 'Samples the workspace''s memories (up to sample_size) for the lexical leg''s word frequencies (brain.lexeme_stat); brain.maintain runs it when the workspace changed by a fifth.';
CREATE FUNCTION brain.annotate(id bigint, note text, source text DEFAULT NULL::text, request_key text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
COMMENT ON FUNCTION brain.annotate(id bigint, note text, source text, request_key text) IS 'Attaches a note (a correction, a gotcha) to a memory; recall shows its annotations. Returns the annotation id. With a request_key, the same call sent again returns the same id and stores nothing.';
CREATE FUNCTION brain.archive(id bigint, reason text, source text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.archive(id bigint, reason text, source text) IS 'Retires an active memory: kept and recallable, out of default search and boot. brain.restore undoes it.';
CREATE FUNCTION brain.attach_embedding(memory_id bigint, embedding double precision[], embedding_space text DEFAULT NULL::text) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/006-write-api.sql
$$;
COMMENT ON FUNCTION brain.attach_embedding(memory_id bigint, embedding double precision[], embedding_space text) IS 'Stores a memory''s embedding in a space (the active one by default). For a write that was queued without one, then runs semantic dedup: near-identical with the same distinguishing terms folds it into the existing memory (the longer text kept, the other recorded in brain.memory_fold; the queued memory is tombstoned pointing there); related and not a distinct fact flags it in metadata.possible_duplicate_of.';
CREATE FUNCTION brain.audit_trail(id bigint DEFAULT NULL::bigint, actors text[] DEFAULT NULL::text[], actions text[] DEFAULT NULL::text[], before_id bigint DEFAULT NULL::bigint, max_results integer DEFAULT 100) RETURNS TABLE(audit_id bigint, memory_id bigint, kind text, headline text, action text, actor text, db_role text, at timestamp with time zone, detail jsonb)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.audit_trail(id bigint, actors text[], actions text[], before_id bigint, max_results integer) IS 'The audit trail of the workspace, or of one memory (id), newest first, filtered by actors and actions; before_id continues from the last audit_id of a page.';
CREATE FUNCTION brain.boot_payload(session bigint, task_embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, token_budget integer DEFAULT NULL::integer, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET enable_seqscan TO 'off'
    AS $$
    -- the body: sql/functions/015a-boot-payload.sql
$$;
COMMENT ON FUNCTION brain.boot_payload(session bigint, task_embedding double precision[], embedding_space text, token_budget integer, now timestamp with time zone) IS 'The payload of a session: BLOCKER rules (5, pinned first), the pinned memories no other section shows (boot_pinned, 10, ranked as the BLOCKER rules; not those with a skill trigger; a fact that a newer statement may replace, an authored fact or a captured turn of another value, brain._newer_statement, marked "(older: #N is newer and may replace it; if so: brain supersede <id>)"), PATTERN rules (5, nearest the task embedding when given, else by rating and recency), open and blocked tasks (20, by priority then due date), always-on skills, other active sessions of the project, pending action items, the previous handoff, and counts of what else exists. Never over the token budget (brain.estimate_tokens): tasks are dropped first, then patterns, then pinned memories, then blockers, then skills, siblings and action items, then the handoff is cut; `dropped` says what went.';
CREATE FUNCTION brain.boot_query(source text, project text DEFAULT ''::text, task text DEFAULT NULL::text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015a-boot-payload.sql
$$;
COMMENT ON FUNCTION brain.boot_query(source text, project text, task text, now timestamp with time zone) IS 'The text whose embedding a boot''s nearest memories are found by (brain.boot_session''s task_embedding: PATTERN rules, trajectories, the context pack): the task when one is given, else the handoff the next session of the project gets (brain._last_handoff), without the head line and labels a hook writes. NULL when there is neither. The SessionStart hook, which has no task, boots with the embedding of this.';
CREATE FUNCTION brain.boot_session(source text, project text DEFAULT ''::text, task text DEFAULT NULL::text, cwd text DEFAULT NULL::text, pid integer DEFAULT NULL::integer, pid_started_at timestamp with time zone DEFAULT NULL::timestamp with time zone, host text DEFAULT NULL::text, client_info jsonb DEFAULT '{}'::jsonb, host_processes jsonb DEFAULT NULL::jsonb, task_embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, token_budget integer DEFAULT NULL::integer, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015a-boot-payload.sql
$$;
COMMENT ON FUNCTION brain.boot_session(source text, project text, task text, cwd text, pid integer, pid_started_at timestamp with time zone, host text, client_info jsonb, host_processes jsonb, task_embedding double precision[], embedding_space text, token_budget integer, now timestamp with time zone) IS 'Registers a session (ending gone ones, and the old session of the same source, cwd, pid and pid start time) and returns its boot payload (brain.boot_payload) with its session_id. Records the tokens injected in brain.boot_event.';
CREATE FUNCTION brain.builtin_search_words() RETURNS TABLE(word text, means text, lexeme text, means_lexeme text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.builtin_search_words() IS 'The built-in dictionary of words and phrases people use for the same thing (postgres/PostgreSQL/pg, k8s/Kubernetes, schema change/migration, noon/business hours, ...): word, the word it means, and both as brain.search_term gives them (a lexeme, or a phrase). A workspace extends it with the setting search_words.';
CREATE FUNCTION brain.capturable_text(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019-hooks.sql
$_$;
COMMENT ON FUNCTION brain.capturable_text(t text) IS 'The part of a turn''s text that may be stored (brain.observe_transcript, brain.transcript_handoff): without the context a hook injected (<pybrain-context>…</pybrain-context>, which the hooks wrap theirs in, and the wrappers clients put injected context in: <system-reminder>, <user-prompt-submit-hook>, <session-start-hook>) and without what the person wrapped in <private>…</private>: everything before a </private> that no <private> of the text opens (the span began in an earlier message), and everything after a <private> the text does not close. Trimmed; empty when nothing is left. A span that goes on over several messages of one speaker: brain.capturable_turns.';
CREATE FUNCTION brain.capturable_turns(turns jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
COMMENT ON FUNCTION brain.capturable_turns(turns jsonb) IS 'The turns of a transcript (a JSON array of {ref, role, text, at}, in order) with each text replaced by what may be stored of it (brain.capturable_text), spans of <private> closed across messages: a <private> that one message of a speaker (role) leaves open hides that speaker''s next messages up to the </private> that closes it, and a </private> with no <private> in its message hides what precedes it there. What the hooks store, hand off and write in a snapshot (brain.observe_transcript, brain.transcript_handoff, brain.transcript_snapshot); a capture cut into batches passes its turns through it first, so a span open at a batch''s end stays open in the next.';
CREATE FUNCTION brain.capture_context(text text, source text DEFAULT NULL::text, project text DEFAULT ''::text, session_id bigint DEFAULT NULL::bigint, embeddings double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, check_only boolean DEFAULT false) RETURNS TABLE(n integer, sentence text, category text, action text, memory_id bigint, duplicate_of bigint, similarity real, embedding_input text, reason text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/013-capture.sql
$$;
COMMENT ON FUNCTION brain.capture_context(text text, source text, project text, session_id bigint, embeddings double precision[], embedding_space text, check_only boolean) IS 'Stores the decisions, actions, gotchas and insights of a text (brain.capture_sentences) through the write gate, marked metadata.auto_captured. Duplicates are skipped with a reason, refused sentences reported, never raised. embeddings holds one row per sentence that check_only => true returns as valid.';
CREATE FUNCTION brain.capture_ended_session(session bigint, turns jsonb, client text DEFAULT 'the agent'::text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019b-hooks-uncaptured.sql
$$;
COMMENT ON FUNCTION brain.capture_ended_session(session bigint, turns jsonb, client text, now timestamp with time zone) IS 'After the turns of an uncaptured session''s transcript are observed (brain.uncaptured_sessions, brain.observe_transcript), writes the handoff from them (brain.transcript_handoff; none when there is nothing to hand off or the transcript is gone) for the next sessions of its project, and marks the session captured (client_info.captured_at), so that it is captured once. stored says whether a handoff was stored (the next boot shows it). BR011 for a session still active. A session whose capture hook left turns (brain.leave_capture) has its handoff already: it is only marked captured.';
CREATE FUNCTION brain.capture_sentences(t text) RETURNS TABLE(n integer, sentence text, kind text, category text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/013-capture.sql
$$;
COMMENT ON FUNCTION brain.capture_sentences(t text) IS 'The sentences of a text worth keeping, by keyword: action (need to, must, todo, follow up, next step, remember to, ...) -> task; decision (decided, chose, going with, switched to, agreed, settled on, ...), gotcha (watch out, careful, pitfall, does not work, fails when, ...), insight (learned, realized, discovered, turns out, the key is, ...) -> fact. Sentences under 4 words are ignored; the first matching class wins in that order.';
CREATE FUNCTION brain.catalogue() RETURNS TABLE(name text, signatures text[], volatility text, security_definer boolean, keyed boolean, read_only boolean, idempotent boolean, replica boolean, telemetry boolean, owner_only boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025a-tenancy-catalogue.sql
$$;
COMMENT ON FUNCTION brain.catalogue() IS 'Each public function of schema brain, one row a name: its signatures, volatility (the most volatile overload), whether it is SECURITY DEFINER, and its traits: keyed (takes a request_key), read_only (STABLE or IMMUTABLE, or served by a replica), idempotent (read_only, or a write a second call changes no further: sent again after a connection lost during its COMMIT), replica (a streaming replica serves it), telemetry (a write a session need not read back), owner_only (never executable by application roles).';
CREATE FUNCTION brain.check_text(text text, field text DEFAULT 'text'::text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.check_text(text text, field text) IS 'true when a text holds no secret, else BR007 naming the field, kind and position. Clients call it before they send a text (a search query, a boot task) to an embedding provider.';
CREATE FUNCTION brain.chunk_text(t text, max_tokens integer DEFAULT 256) RETURNS TABLE(chunk integer, headline text, section text, body text)
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/010-observe.sql
$_$;
COMMENT ON FUNCTION brain.chunk_text(t text, max_tokens integer) IS 'Splits text into chunks whose embedding input (headline and body) is estimated at max_tokens tokens or fewer (brain.wordpiece_tokens). Markdown-aware: a heading starts a chunk and heads it with its heading path (section); paragraphs, list runs, fenced code blocks and tables are cut only when one alone does not fit (at lines: code fenced again, table header repeated; then sentences, words, characters). Newlines are kept.';
CREATE FUNCTION brain.clean_body(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.clean_body(t text) IS 'A body as stored: lines and tabs kept, other control characters, bidi controls and tag characters removed.';
CREATE FUNCTION brain.clean_headline(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.clean_headline(t text) IS 'A headline as stored: one line (line breaks and tabs folded to spaces), without control or format characters (bidi overrides, zero-width, tag characters).';
CREATE FUNCTION brain.code_tokens(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
COMMENT ON FUNCTION brain.code_tokens(t text) IS 'Identifiers joined by _ or : (idle_timeout, ERR_SSL_PROTOCOL), lowercased, with their leading runs of 2+ parts: indexed and searched whole beside the parts the english parser splits them into.';
CREATE FUNCTION brain.confirm(id bigint, source text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
COMMENT ON FUNCTION brain.confirm(id bigint, source text) IS 'Records that a memory is still true: resets a fact''s decay (a dormant fact is active again).';
CREATE FUNCTION brain.confirm_flagged(id bigint, source text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/018-safety.sql
$$;
COMMENT ON FUNCTION brain.confirm_flagged(id bigint, source text) IS 'A person confirms a flagged memory: it is data, not an attack. It then enters the boot payload like any other. The role that wrote its text (or a role that can act as it) cannot confirm it (BR020): another member of the workspace can, and an admin of the workspace always can.';
CREATE FUNCTION brain.count_recall(id bigint) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.count_recall(id bigint) IS 'Counts a recall of a memory as brain.recall does (its access, a dormant fact active again, a trajectory''s use, the use of an injection that showed it in the session) and returns nothing: the primary''s half of a recall whose memory a replica read (brain.recall_view).';
CREATE FUNCTION brain.create_action_item(text text, project text DEFAULT ''::text, for_source text DEFAULT NULL::text, session bigint DEFAULT NULL::bigint, all_projects boolean DEFAULT false, request_key text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.create_action_item(text text, project text, for_source text, session bigint, all_projects boolean, request_key text) IS 'Raises an item for the sessions of a project (a session: of its own project, at most action_items_per_hour an hour by the server''s clock), or of one source: until one of them acknowledges it, each of them (but the one that raised it) is refused writes. The sessions of other projects are never blocked, unless all_projects => true, which only an admin of the workspace may give (BR020): then the sessions of every project. With a request_key, the same call sent again returns the same item and raises none.';
CREATE FUNCTION brain.create_pack(name text, query text DEFAULT NULL::text, memory_ids bigint[] DEFAULT NULL::bigint[], filters jsonb DEFAULT '{}'::jsonb, token_budget integer DEFAULT NULL::integer, description text DEFAULT ''::text, project text DEFAULT ''::text, embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, source text DEFAULT NULL::text, check_only boolean DEFAULT false) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/024b-packs.sql
$_$;
COMMENT ON FUNCTION brain.create_pack(name text, query text, memory_ids bigint[], filters jsonb, token_budget integer, description text, project text, embedding double precision[], embedding_space text, source text, check_only boolean) IS 'Defines (or redefines: version + 1) a named context pack: a query with filters (kinds, categories, tags) or a list of memory ids, a token budget (default pack_token_budget), a description and a project; embedding is that of its query (else of its name and description), which boot_session compares with the task. Secrets refused, audited (action pack). Returns action (created, updated, unchanged), pack_id, name, version.';
CREATE FUNCTION brain.create_role(name text, workspace_id bigint, access text DEFAULT 'write'::text, password text DEFAULT NULL::text, statement_timeout text DEFAULT '5s'::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.create_role(name text, workspace_id bigint, access text, password text, statement_timeout text) IS 'Creates a login role in brain_user bound to one workspace, with a statement_timeout (owner of schema brain only). Returns the generated password when none was given; it is not stored anywhere else.';
CREATE FUNCTION brain.create_token(role text, name text, workspace_id bigint DEFAULT NULL::bigint, access text DEFAULT NULL::text, expires_in interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/022-serve.sql
$$;
COMMENT ON FUNCTION brain.create_token(role text, name text, workspace_id bigint, access text, expires_in interval) IS 'Creates a bearer token of brain serve for a role in a workspace (admins of the workspace and the owner), with at most the role''s access there and an optional lifetime. Returns the token once; only its sha256 is kept.';
CREATE FUNCTION brain.create_workspace(name text, organization_id bigint DEFAULT 1) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.create_workspace(name text, organization_id bigint) IS 'Creates a workspace (owner of schema brain only). It has no members until brain.grant_workspace.';
CREATE FUNCTION brain.current_version(id bigint) RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.current_version(id bigint) IS 'The end of a memory''s supersede chain: the memory that holds the current belief (itself when not superseded).';
CREATE FUNCTION brain.current_workspace(access text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.current_workspace(access text) IS 'The current workspace when the connected role has at least this access (read, write, admin) there; raises BR020 otherwise (BR009 for another access level).';
CREATE FUNCTION brain.dashboard_facets() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.dashboard_facets() IS 'The projects, audit actors and audit actions of the workspace (the dashboard''s filter choices), and the caller''s access (read, write or admin).';
CREATE FUNCTION brain.database_counts() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
COMMENT ON FUNCTION brain.database_counts() IS 'Row counts a backup is checked by: memories per state, audit rows, annotations, folds, embeddings, sessions, handoffs and workspaces — every workspace''s for a superuser (`brain backup` and `brain restore` read them as the database owner), the rows row-level security shows otherwise.';
CREATE FUNCTION brain.decay_outlook(within interval DEFAULT '7 days'::interval, projects text[] DEFAULT NULL::text[], max_results integer DEFAULT 200, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, project text, headline text, decay double precision, halflife_days real, last_touch timestamp with time zone, dormant_after timestamp with time zone, dormant boolean, dormant_soon boolean, pinned boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.decay_outlook(within interval, projects text[], max_results integer, now timestamp with time zone) IS 'Active facts by decay score, lowest first: each one''s score, half-life, last touch, when it goes (or went) dormant, and whether it will within the given interval; the dormant threshold is the setting fact_dormant_threshold.';
CREATE FUNCTION brain.decay_score(last_touch timestamp with time zone, halflife_days double precision, now timestamp with time zone DEFAULT now()) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.decay_score(last_touch timestamp with time zone, halflife_days double precision, now timestamp with time zone) IS 'Ebbinghaus decay of a fact: 2^(-days since it was last touched / half-life). 1 when just touched.';
CREATE FUNCTION brain.derive_headline(t text, max_words integer DEFAULT 12) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
COMMENT ON FUNCTION brain.derive_headline(t text, max_words integer) IS 'A headline for observed text: the first line''s first max_words words, with an ellipsis when cut.';
CREATE FUNCTION brain.distinguishing_terms(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
COMMENT ON FUNCTION brain.distinguishing_terms(t text) IS 'The terms that tell one fact from another: numbers, dates, versions, identifiers, paths, hosts, acronyms, camelCase and names (capitalized words inside a sentence that are not common English words), lowercased. Texts with different terms never fold together (docs/ranking.md).';
CREATE FUNCTION brain.drop_embedding_space(embedding_space text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
COMMENT ON FUNCTION brain.drop_embedding_space(embedding_space text) IS 'Deletes a space that is not active, with its embeddings and its HNSW indexes.';
CREATE FUNCTION brain.drop_pack(name text, source text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.drop_pack(name text, source text) IS 'Drops a context pack (kept as dropped, audited); its name is free again.';
CREATE FUNCTION brain.embedding_failed(memory_id bigint, error text, status integer DEFAULT NULL::integer, embedding_space text DEFAULT NULL::text) RETURNS TABLE(attempts integer, parked boolean, next_attempt_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/017-embedding-failures.sql
$$;
COMMENT ON FUNCTION brain.embedding_failed(memory_id bigint, error text, status integer, embedding_space text) IS 'Records that the embedder refused a memory''s text (HTTP status and a short reason, with the memory''s text cut out should the provider quote it): brain.pending_embeddings leaves it out for embedding_retry_seconds, doubled after each failure, and after embedding_max_attempts failures parks it until brain.retry_failed_embeddings. A successful brain.attach_embedding clears the record.';
CREATE FUNCTION brain.embedding_input(headline text, body text DEFAULT ''::text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
    -- the body: sql/functions/001-text.sql
$_$;
COMMENT ON FUNCTION brain.embedding_input(headline text, body text) IS 'The text an embedder sees for a memory: the headline, a blank line, the body (the body alone when it starts with the headline).';
CREATE FUNCTION brain.embedding_input(headline text, body text, title text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
COMMENT ON FUNCTION brain.embedding_input(headline text, body text, title text) IS 'The text an embedder sees for a memory with a title (a document chunk): the title first (cut to 24 estimated tokens), joined to the headline as one location path (docs/guide.md > Guide > Webhooks) when the headline is said apart from the body, else on its own line; then brain.embedding_input(headline, body). A NULL or empty title: brain.embedding_input(headline, body).';
CREATE FUNCTION brain.embedding_progress(embedding_space text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
COMMENT ON FUNCTION brain.embedding_progress(embedding_space text) IS 'How far a space is filled: memories to embed (all but tombstoned), embedded, pending.';
CREATE FUNCTION brain.end_session(session bigint, handoff text DEFAULT NULL::text, snapshot jsonb DEFAULT NULL::jsonb, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.end_session(session bigint, handoff text, snapshot jsonb, now timestamp with time zone) IS 'Ends a session with a handoff for the next session of the same project (any source) (shown at its boot, cut to 2000 characters) and a snapshot {summary, status, blockers, pending}. A session that has already ended keeps the handoff all the same (had_ended says when and why); with neither handoff nor snapshot that is BR011. A handoff identical to the one the next session gets already (the same text, and the same snapshot or none) is not stored again: unchanged is true.';
CREATE FUNCTION brain.end_session_of(source text, project text DEFAULT ''::text, cwd text DEFAULT NULL::text, host text DEFAULT NULL::text, handoff text DEFAULT NULL::text, snapshot jsonb DEFAULT NULL::jsonb, host_processes jsonb DEFAULT NULL::jsonb, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/014-sessions.sql
$_$;
COMMENT ON FUNCTION brain.end_session_of(source text, project text, cwd text, host text, handoff text, snapshot jsonb, host_processes jsonb, now timestamp with time zone) IS 'Ends the session booted for a seat (source, project, cwd, host), as a later shell of that seat would: after ending the gone sessions, the seat''s newest live session, else its newest ended one (whose handoff is kept all the same), else none: the handoff is stored for the project and source. A handoff is never dropped.';
CREATE FUNCTION brain.estimate_tokens(t text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/015-boot.sql
$$;
COMMENT ON FUNCTION brain.estimate_tokens(t text) IS 'Estimated tokens of a text: one per 4 characters, rounded up (the usual ratio of BPE tokenizers on English). Boot budgets count with it.';
CREATE FUNCTION brain.exact_tokens(query text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005-search.sql
$_$;
COMMENT ON FUNCTION brain.exact_tokens(query text) IS 'The tokens of a query of at most three words that name one thing verbatim (IPs, error codes, snake_case and CamelCase identifiers, hex ids, versions, paths, ticket keys), lowercased: a memory holding them all ranks as evidence (exact_token_relevance, docs/ranking.md).';
CREATE FUNCTION brain.export_header(include_vectors boolean DEFAULT false, project text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
COMMENT ON FUNCTION brain.export_header(include_vectors boolean, project text) IS 'The first line of an export (docs/export-format.md): format pybrain-memories, version 2, the source workspace and schema, the time, and the number of memories, sessions and handoffs (stored apart from their session) that follow.';
CREATE FUNCTION brain.export_memories(include_vectors boolean DEFAULT false, project text DEFAULT NULL::text, after_id bigint DEFAULT 0, max_results integer DEFAULT NULL::integer) RETURNS TABLE(memory_id bigint, doc jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
COMMENT ON FUNCTION brain.export_memories(include_vectors boolean, project text, after_id bigint, max_results integer) IS 'Every memory of the workspace (or of one project) as one JSON document, by id: its columns, kind details, annotations, fold records (brain.memory_fold) and, with include_vectors, its embeddings with their space. Page with after_id and max_results. The format is docs/export-format.md.';
CREATE FUNCTION brain.export_packs(project text DEFAULT NULL::text) RETURNS TABLE(doc jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.export_packs(project text) IS 'The active context packs of the workspace (or of one project) as export lines {"record": "pack", name, description, project, query, filters, memory_ids, token_budget, ...} (docs/export-format.md).';
CREATE FUNCTION brain.export_sessions(project text DEFAULT NULL::text) RETURNS TABLE(doc jsonb)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/020-transfer.sql
$$;
COMMENT ON FUNCTION brain.export_sessions(project text) IS 'The sessions of the workspace (or of one project) with their handoffs and snapshots, then the handoffs stored apart from their session (brain.handoff), as export lines {"record": "session" | "handoff", ...} (docs/export-format.md). A session''s process (pid) stays out: it means nothing elsewhere.';
CREATE FUNCTION brain.extract_action_items(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain.extract_action_items(t text) IS 'Sentences that ask for an action ("need to", "must", "follow up", "todo", "remember to", ...): up to 10.';
CREATE FUNCTION brain.extract_people(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain.extract_people(t text) IS '@mentions, lowercased (e-mail addresses are not mentions).';
CREATE FUNCTION brain.extract_tags(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain.extract_tags(t text) IS '#hashtags, lowercased (not C#, not URL fragments).';
CREATE FUNCTION brain.extract_topics(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain.extract_topics(t text) IS 'Capitalized words that do not start a sentence (names, products, acronyms): up to 10, in order of appearance.';
CREATE FUNCTION brain.failed_embeddings(embedding_space text DEFAULT NULL::text, max_results integer DEFAULT 50) RETURNS TABLE(memory_id bigint, headline text, attempts integer, last_status integer, last_error text, first_failed_at timestamp with time zone, last_failed_at timestamp with time zone, next_attempt_at timestamp with time zone, parked boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/017-embedding-failures.sql
$$;
COMMENT ON FUNCTION brain.failed_embeddings(embedding_space text, max_results integer) IS 'The memories whose text the embedder of a space (the active one by default) refused: parked ones first, then those waiting for another try, with the attempts, the last HTTP status and reason.';
CREATE FUNCTION brain.find_secrets(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.find_secrets(t text) IS 'The kinds of secret found in a text (brain.scan_secrets): empty when clean.';
CREATE FUNCTION brain.forget(id bigint, reason text, replaced_by bigint DEFAULT NULL::bigint, source text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.forget(id bigint, reason text, replaced_by bigint, source text) IS 'Tombstones a memory with a reason (and optionally the memory that replaces it). The row and its audit trail stay; only an explicit prune deletes.';
CREATE FUNCTION brain.grant_workspace(role text, workspace_id bigint, access text DEFAULT 'write'::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.grant_workspace(role text, workspace_id bigint, access text) IS 'Gives a database role read, write or admin access to a workspace, or changes its access (admins of the workspace and the owner).';
CREATE FUNCTION brain.guardrail_stamps(t text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001c-text-signals.sql
$$;
COMMENT ON FUNCTION brain.guardrail_stamps(t text) IS 'Date-stamped GUARDRAIL markers: per line, the smaller of the GUARDRAIL words and the YYYY-MM-DD dates on it. Two or more means merged guardrails.';
CREATE FUNCTION brain.hand_off_transcript(turns jsonb, event text, source text, project text DEFAULT ''::text, cwd text DEFAULT NULL::text, host text DEFAULT NULL::text, host_processes jsonb DEFAULT NULL::jsonb, client text DEFAULT 'the agent'::text, transcript text DEFAULT NULL::text, compaction boolean DEFAULT false, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019-hooks.sql
$_$;
COMMENT ON FUNCTION brain.hand_off_transcript(turns jsonb, event text, source text, project text, cwd text, host text, host_processes jsonb, client text, transcript text, compaction boolean, now timestamp with time zone) IS 'What a capture hook (PreCompact, SessionEnd) calls after observing a transcript''s turns: the handoff written from them (brain.transcript_handoff), with the snapshot written from them (brain.transcript_snapshot), ends the session booted for its client session (transcript), or, with no client session named, the seat''s session as brain.end_session_of would (a client session no start registered ends no other session: its handoff is stored for no session, counting from then), unless the next session of the project gets the same handoff already (unchanged: the same turns handed off at compaction and again at the end are stored once). With no prompt and no reply (an empty session, a missing transcript) there is nothing to hand off: the seat''s live session ends without one and the last real handoff stays. compaction => true (the PreCompact hook) ends the session with end_reason compacted: the turns stored up to then are no longer in front of the agent, and brain.prompt_context brings them back to it. Returns end_session_of''s answer and the handoff (NULL when none).';
CREATE FUNCTION brain.health() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/016-observability.sql
$$;
COMMENT ON FUNCTION brain.health() IS 'What the database knows of pybrain''s health: server version and uptime, pgvector and pg_trgm versions, schema, memories per kind and state, the active space, its pending embeddings and the texts its embedder refused (retrying, parked), sessions, last maintenance, and what the installer''s revokes left open to every role (exposed: USAGE ON LANGUAGE plpgsql or sql, CREATE ON SCHEMA public; docs/security.md). The MCP server and CLI add embedder reachability and their own uptime.';
CREATE FUNCTION brain.history(id bigint) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.history(id bigint) IS 'A memory''s whole supersede chain (every version, oldest first) and the audit events of all its versions. NULL when the memory does not exist.';
CREATE FUNCTION brain.holds_tokens(t text, tokens text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005-search.sql
$_$;
COMMENT ON FUNCTION brain.holds_tokens(t text, tokens text[]) IS 'True when the text holds every token verbatim (case-insensitive) as a whole token.';
CREATE FUNCTION brain.import_memories(docs jsonb, source text DEFAULT NULL::text, project text DEFAULT NULL::text, semantic_dedup boolean DEFAULT false, trust_file boolean DEFAULT false) RETURNS TABLE(item integer, chunk integer, old_id bigint, action text, memory_id bigint, vectors integer, error_code text, error text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/020a-transfer-import.sql
$$;
COMMENT ON FUNCTION brain.import_memories(docs jsonb, source text, project text, semantic_dedup boolean, trust_file boolean) IS 'Loads memory documents (docs/export-format.md: an export''s lines, or an importer''s) into the workspace, in order, through the write gate: each gets a new id; its headline and body are cleaned and its text flagged (brain.injection_signals) as any write''s; states, supersede chains, forget replacements, annotations and fold records are kept, links remapped to the new ids. A file is data, not authority: pins, ratings, importance, access counts, decay times, flags, the origin overlay and a skill''s always_on are taken from it only with trust_file => true (an admin of the workspace); its times (never later than the import) and provenance are kept as its claims, recorded in metadata.import, and an annotation''s author is named as claimed unless trusted. A document with only a text gets a derived headline (its title when given) and is split into parts when too long. Refused documents (BR codes, secrets included; a value of the wrong type is named by its field, never repeated) are reported and the rest stored; an active text already stored (same kind and project) or a record already imported is skipped. Vectors are kept for the workspace''s spaces of the same provider, model and dimensions; other memories wait for `brain worker`. semantic_dedup => true lets the worker''s embedding run semantic dedup on the imported active memories. One row per document (per part) with its action: created, skipped or rejected.';
CREATE FUNCTION brain.import_packs(docs jsonb, id_map jsonb DEFAULT '{}'::jsonb, project text DEFAULT NULL::text) RETURNS TABLE(item integer, old_id bigint, action text, name text, pack_id bigint, version integer, embedding_input text, error_code text, error text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.import_packs(docs jsonb, id_map jsonb, project text) IS 'Loads the pack lines of an export (brain.export_packs) through brain.create_pack: listed ids mapped by id_map ({"old id": new id}, from brain.import_memories), ids the import did not bring left out; a pack whose name exists is skipped, a refused one (BR codes, secrets included) reported. One row per line with its action and the text to embed.';
CREATE FUNCTION brain.import_sessions(docs jsonb, project text DEFAULT NULL::text) RETURNS TABLE(item integer, line text, old_id bigint, action text, new_id bigint, error_code text, error text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/020-transfer.sql
$_$;
COMMENT ON FUNCTION brain.import_sessions(docs jsonb, project text) IS 'Loads the session and handoff lines of an export (brain.export_sessions) into the workspace, in project when given: sessions as ended ones (an imported session is not live here; one that was live ends as imported) with their handoffs and snapshots, then the handoffs stored apart, linked to the imported sessions. A secret is refused (BR007), a malformed line rejected, each reported as a row; a line already imported (the same source, project, start and cwd; the same handoff text and time) is skipped. The next session of the project gets the newest handoff, as it would have.';
CREATE FUNCTION brain.index_vectors(embedding_space text DEFAULT NULL::text, max_rows integer DEFAULT 1000) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/009-spaces.sql
$$;
COMMENT ON FUNCTION brain.index_vectors(embedding_space text, max_rows integer) IS 'Takes the vectors that large observe_batch calls left out of the HNSW index into it, one step per call (repeat until action is none): drops an index a rebuild replaced (dropped; when the table is in use it goes on with the other steps, and says busy if none had work); runs the near-identical dedup owed by vectors a rebuild took in (folded: a fold keeps the longer text and tombstones the other); rebuilds the space''s index in memory when the waiting vectors are at least index_rebuild_share (0.25) of the indexed ones (rebuilt: writers of embeddings wait meanwhile, searches go on); or inserts the oldest max_rows and runs their dedup (inserted). `brain worker` calls it.';
CREATE FUNCTION brain.ingest_documents(documents jsonb, source_system text DEFAULT 'files'::text, project text DEFAULT ''::text, scopes text[] DEFAULT NULL::text[], listing text[] DEFAULT NULL::text[], embeddings double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, check_only boolean DEFAULT false, source_agent text DEFAULT NULL::text) RETURNS TABLE(ref text, chunk integer, action text, memory_id bigint, previous_id bigint, previous_ref text, headline text, section text, body text, embedding_input text, error_code text, error text, redacted jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/021-ingest.sql
$$;
COMMENT ON FUNCTION brain.ingest_documents(documents jsonb, source_system text, project text, scopes text[], listing text[], embeddings double precision[], embedding_space text, check_only boolean, source_agent text) IS 'Keeps documents in step with their source. documents: [{ref, hash, text, format}]; a new or changed document sent without its text is reported (action new or changed, no chunk rows) and left for a call that sends it, so a first call with refs and hashes alone says which texts are needed. Each document is one or more artifact facts (category reference) keyed by (source_system, project, source_ref) with source_chunk = the chunk''s position and source_hash = the document''s hash. A document with its stored hash is unchanged (nothing embedded, nothing written); a new ref with the hash of a ref in scope and not in the listing is renamed (its memories move, history kept); a changed one keeps its unchanged chunks, supersedes a changed chunk''s old version (reason "changed at source"), adds new chunks and tombstones gone ones; refs in scopes ('''' every ref, a folder ending in / the refs under it) that are neither sent nor in listing (every ref of the run, when documents is one batch of it) are removed at source (tombstoned, reason "removed at source"). Text is stored with secrets redacted (redacted lists them), chunked by brain.chunk_text; a chunk repeating an active memory is a duplicate and not stored. One row per document (chunk NULL) and per chunk: action unchanged | renamed | new | changed | removed | duplicate | rejected. check_only => true writes nothing and returns each chunk (headline, section, body) and the embedding_input of each chunk to store; embeddings then holds one row per such chunk, in order (NULL: stored and queued for brain worker), and a document may carry the chunks check_only returned ([{headline, section, body}], unchanged and duplicate ones too) so they are not cut again (they are scanned for secrets and gated again).';
CREATE FUNCTION brain.injection_metrics(group_by text DEFAULT 'trigger'::text, window_size interval DEFAULT '24:00:00'::interval, session bigint DEFAULT NULL::bigint, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(key text, injections bigint, items bigint, tokens bigint, truncated bigint, used bigint, used_share double precision, first_at timestamp with time zone, last_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
COMMENT ON FUNCTION brain.injection_metrics(group_by text, window_size interval, session bigint, now timestamp with time zone) IS 'Injections of a window (default 24 hours), per trigger or per session: how many, items and estimated tokens injected, how many the budget cut, how many injected items the session later used (recalled, rated, superseded, cited) and that share.';
CREATE FUNCTION brain.injection_signals(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001c-text-signals.sql
$_$;
COMMENT ON FUNCTION brain.injection_signals(t text) IS 'Why a text looks like an instruction to the agent: override-phrase, role-marker (chat roles, template tokens, ### Instruction: / ### Response:), tool-call, external-link, payload-heading (a heading of the boot payload''s own), wrapper-tag (the tags pybrain and agent clients wrap injected context in: <pybrain-context>, <system-reminder>, <command-name>, ...), shell-pipe (a download piped to a shell or interpreter), hidden-characters. Read after NFKC and with common Cyrillic and Greek look-alikes of Latin letters as those letters; every Unicode line break (\r, \v, \f, U+0085, U+2028, U+2029) starts a line. Empty when none. Deterministic (patterns only).';
CREATE FUNCTION brain.leave_capture(session bigint, transcript text, client_session text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019b-hooks-uncaptured.sql
$$;
COMMENT ON FUNCTION brain.leave_capture(session bigint, transcript text, client_session text, now timestamp with time zone) IS 'What a capture hook (SessionEnd) calls when its time ran out before it stored every turn of its transcript: it has ended the session with the handoff written from all of them (brain.hand_off_transcript) and stored the first ones (brain.observe_transcript, in batches); the session is marked (client_info.capture_left, with the transcript''s path and client session), so that the next session start of its seat stores the rest (brain.uncaptured_sessions hands it out, up to ten times, each try storing more; brain.capture_ended_session then marks it captured without a second handoff). A session booted for another client session is not marked (capture_left NULL: the hook keeps its input for later instead). BR011 for a session still active.';
CREATE FUNCTION brain.lexical_query(query text) RETURNS tsquery
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.lexical_query(query text) IS 'The query words the lexical leg looks for (brain.lexical_terms with searched), OR-ed: the rarest, until about lexical_max_rows (1000) memories match, never a word in more than lexical_max_term_share (2%) of memories.';
CREATE FUNCTION brain.lexical_terms(query text) RETURNS TABLE(lexeme text, docs bigint, idf double precision, searched boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.lexical_terms(query text) IS 'The query''s words as the lexical leg weighs them: lexeme (english stem, identifier, or a phrase of the dictionary of words for the same thing, which then stands for its words), docs (memories of the workspace holding it; counted up to lexical_max_rows, estimated beyond), idf (BM25), searched (the leg finds memories by it; common words only add to the score of memories the rare ones found).';
CREATE FUNCTION brain.lifecycle() RETURNS TABLE(subject text, action text, from_state text, to_state text)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.lifecycle() IS 'Every allowed change of a memory''s state (subject memory) and of a task''s status (subject task), with the action that makes it: supersede, unsupersede, forget, archive, restore and the rest. The functions that change a state check it, and triggers refuse any change of state or status it does not hold (BR011).';
CREATE FUNCTION brain.list_action_items(statuses text[] DEFAULT '{pending}'::text[], max_results integer DEFAULT 50) RETURNS TABLE(id bigint, text text, project text, all_projects boolean, for_source text, created_by bigint, created_at timestamp with time zone, status text, acknowledged_by bigint, acknowledged_at timestamp with time zone, response text)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.list_action_items(statuses text[], max_results integer) IS 'Action items of the workspace with the given statuses (pending by default; NULL for all), newest first.';
CREATE FUNCTION brain.list_active_sessions(project text DEFAULT NULL::text, exclude_session bigint DEFAULT NULL::bigint, host text DEFAULT NULL::text, host_processes jsonb DEFAULT NULL::jsonb, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF brain.session_brief
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.list_active_sessions(project text, exclude_session bigint, host text, host_processes jsonb, now timestamp with time zone) IS 'Live sessions (of a project, or all), after ending the gone ones: heartbeat older than session_ttl_minutes (5), or a process missing from host_processes on that host. exclude_session leaves the caller out (and refreshes its heartbeat).';
CREATE FUNCTION brain.list_flagged(include_confirmed boolean DEFAULT false, max_results integer DEFAULT 50) RETURNS TABLE(id bigint, kind text, project text, origin text, headline text, flag_reasons text[], confirmed_at timestamp with time zone, confirmed_by text, created_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/018-safety.sql
$$;
COMMENT ON FUNCTION brain.list_flagged(include_confirmed boolean, max_results integer) IS 'Active memories flagged as possible instructions to the agent, with their reasons, newest first: those waiting for a person (and the confirmed ones with include_confirmed).';
CREATE FUNCTION brain.list_members(workspace_id bigint DEFAULT NULL::bigint) RETURNS TABLE(role_name text, access text, can_login boolean, granted_at timestamp with time zone, granted_by text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.list_members(workspace_id bigint) IS 'The roles with access to a workspace and their access (admins of the workspace).';
CREATE FUNCTION brain.list_memories(kinds text[] DEFAULT NULL::text[], projects text[] DEFAULT NULL::text[], states text[] DEFAULT NULL::text[], tiers text[] DEFAULT NULL::text[], only_flagged boolean DEFAULT false, before_id bigint DEFAULT NULL::bigint, max_results integer DEFAULT 50, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, kind text, category text, origin text, project text, headline text, preview text, state text, tier text, decay double precision, pinned boolean, flagged boolean, upvotes integer, downvotes integer, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.list_memories(kinds text[], projects text[], states text[], tiers text[], only_flagged boolean, before_id bigint, max_results integer, now timestamp with time zone) IS 'A page of memories, newest first, filtered by kinds, projects (exact), states, tiers (hot, warm, cold, archive) and, with only_flagged, the memories flagged as possible instructions and not confirmed; with each one''s tier and a fact''s decay score; before_id continues from the last id of a page.';
CREATE FUNCTION brain.list_packs(project text DEFAULT NULL::text) RETURNS TABLE(pack_id bigint, name text, version integer, description text, project text, query text, filters jsonb, memory_ids bigint[], members integer, token_budget integer, embedded boolean, created_by text, created_at timestamp with time zone, updated_at timestamp with time zone, flag_reasons text[])
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.list_packs(project text) IS 'The active context packs (of a project and the global ones), by name, each with the injection signals of its description and query (flag_reasons, empty when none).';
CREATE FUNCTION brain.list_recent(kinds text[] DEFAULT NULL::text[], project text DEFAULT NULL::text, max_results integer DEFAULT 20, include_superseded boolean DEFAULT false, include_archived boolean DEFAULT false) RETURNS SETOF brain.memory_brief
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.list_recent(kinds text[], project text, max_results integer, include_superseded boolean, include_archived boolean) IS 'The newest memories, headlines and previews, filtered like search.';
CREATE FUNCTION brain.list_sessions(include_ended boolean DEFAULT true, projects text[] DEFAULT NULL::text[], max_results integer DEFAULT 50) RETURNS TABLE(session_id bigint, source text, project text, cwd text, host text, pid integer, current_task text, status text, started_at timestamp with time zone, heartbeat_at timestamp with time zone, ended_at timestamp with time zone, end_reason text, handoff text, siblings bigint[])
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.list_sessions(include_ended boolean, projects text[], max_results integer) IS 'Sessions of the workspace, active ones first, then the most recent, each with its handoff and the ids of its siblings (the other active sessions of its project).';
CREATE FUNCTION brain.list_skills(project text DEFAULT NULL::text) RETURNS TABLE(name text, id bigint, headline text, keywords jsonb, projects jsonb, always_on boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.list_skills(project text) IS 'Active skills (global, plus those scoped to the given project; all when project is NULL).';
CREATE FUNCTION brain.list_snapshots(project text DEFAULT NULL::text, max_results integer DEFAULT 50) RETURNS TABLE(session_id bigint, source text, project text, at timestamp with time zone, summary text, status text, blockers jsonb, pending jsonb, handoff text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.list_snapshots(project text, max_results integer) IS 'The snapshots sessions left (end_session''s summary, status, blockers, pending, with the handoff), of a project or all, newest first: the timeline a boot after a gap resumes from.';
CREATE FUNCTION brain.list_tokens(workspace_id bigint DEFAULT NULL::bigint, include_revoked boolean DEFAULT false) RETURNS TABLE(token_id bigint, name text, role_name text, access text, prefix text, state text, created_at timestamp with time zone, created_by text, last_used_at timestamp with time zone, expires_at timestamp with time zone, revoked_at timestamp with time zone, revoked_by text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/022-serve.sql
$$;
COMMENT ON FUNCTION brain.list_tokens(workspace_id bigint, include_revoked boolean) IS 'The tokens of a workspace (default: the current one) with their role, access, state (active, expired, revoked), creation, last use and expiry; never the token (admins of the workspace).';
CREATE FUNCTION brain.list_trajectories(project text DEFAULT NULL::text, include_superseded boolean DEFAULT false, max_results integer DEFAULT 50) RETURNS TABLE(id bigint, headline text, project text, steps integer, failed_steps integer, times_recorded integer, times_used integer, last_used_at timestamp with time zone, state text, superseded_by bigint, created_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024a-trajectories-record.sql
$$;
COMMENT ON FUNCTION brain.list_trajectories(project text, include_superseded boolean, max_results integer) IS 'Trajectories (of a project and the global scope), newest first: steps, failed attempts, times recorded and used.';
CREATE FUNCTION brain.list_workspaces() RETURNS TABLE(workspace_id bigint, name text, access text, members bigint, memories bigint, created_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.list_workspaces() IS 'The workspaces the connected role is a member of, with its access, the number of members and of active memories.';
CREATE FUNCTION brain.load_pack(name text, token_budget integer DEFAULT NULL::integer, session bigint DEFAULT NULL::bigint) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.load_pack(name text, token_budget integer, session bigint) IS 'A context pack rendered for an agent (brain.render_pack), its injection recorded.';
CREATE FUNCTION brain.load_skill(name text, project text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.load_skill(name text, project text) IS 'The active skill with this name (global, or scoped to the given project), recalled in full.';
CREATE FUNCTION brain.maintain(now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/012-maintenance.sql
$$;
COMMENT ON FUNCTION brain.maintain(now timestamp with time zone) IS 'One maintenance pass at `now`: counts facts that turned dormant since the last run, archives incidents untouched for incident_archive_days (90), marks tasks idle for task_stale_days (14) stale, archives expired memories, ends sessions whose heartbeat is older than session_ttl_minutes, forgets the answers kept for request keys older than request_key_hours (24); samples the workspace''s word frequencies again when it changed by a fifth (brain.analyze_lexemes); records a maintenance_run. Running it again at the same `now` changes nothing.';
CREATE FUNCTION brain.maintain_if_due() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/012-maintenance.sql
$$;
COMMENT ON FUNCTION brain.maintain_if_due() IS 'brain.maintain, unless a run happened within maintain_interval_hours (24) by the server''s clock: cheap to call from every agent hook.';
CREATE FUNCTION brain.match_preview(body text, query text, max_chars integer DEFAULT 160) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.match_preview(body text, query text, max_chars integer) IS 'The passage of a body around what a query matched (the query''s word the body holds fewest times: a number before a word every line has), at most max_chars characters on one line with … where the body goes on; the start of the body when nothing matched. Search''s preview.';
CREATE FUNCTION brain.memory_json(id bigint) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/004-write.sql
$$;
COMMENT ON FUNCTION brain.memory_json(id bigint) IS 'One memory as JSON: its columns and its kind''s details (severity, halflife, incident details, task status). NULL when absent.';
CREATE FUNCTION brain.memory_page(id bigint, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.memory_page(id bigint, now timestamp with time zone) IS 'A memory''s page: its document (brain.memory_json, with annotations and ratings), tier, decay, whether it is dormant or flagged, the end of its supersede chain, its history (chain with reasons, and audit events), and the caller''s access; reading it is not a use (no access bump).';
CREATE FUNCTION brain.memory_tier(state text, kind text, pinned boolean, dormant_after timestamp with time zone, expires_at timestamp with time zone, last_touch timestamp with time zone, now timestamp with time zone DEFAULT now()) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.memory_tier(state text, kind text, pinned boolean, dormant_after timestamp with time zone, expires_at timestamp with time zone, last_touch timestamp with time zone, now timestamp with time zone) IS 'hot: pinned or touched within hot_days (7); warm: other active memories; cold: dormant facts and expired memories; archive: archived, superseded or forgotten.';
CREATE FUNCTION brain.memory_tsv(headline text, body text, context text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
COMMENT ON FUNCTION brain.memory_tsv(headline text, body text, context text) IS 'The full-text vector the lexical leg searches: headline words weigh A, body words B, context words C, plus identifiers whole (brain.code_tokens).';
CREATE FUNCTION brain.metrics(window_size interval DEFAULT '24:00:00'::interval, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(tool text, calls bigint, errors bigint, error_rate double precision, avg_ms double precision, p99_ms double precision, last_call timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/016-observability.sql
$$;
COMMENT ON FUNCTION brain.metrics(window_size interval, now timestamp with time zone) IS 'Per tool over a window (24 h): calls, errors, error rate, average and p99 latency in ms.';
CREATE FUNCTION brain.metrics_series(window_size interval DEFAULT '24:00:00'::interval, buckets integer DEFAULT 24, tool text DEFAULT NULL::text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(bucket_start timestamp with time zone, calls bigint, errors bigint, error_rate double precision, p50_ms double precision, p95_ms double precision, p99_ms double precision)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.metrics_series(window_size interval, buckets integer, tool text, now timestamp with time zone) IS 'Tool calls over a window in equal buckets (oldest first, empty ones included): calls, errors, error rate and latency percentiles (p50, p95, p99), of one tool or all.';
CREATE FUNCTION brain.normalize_text(headline text, body text DEFAULT ''::text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
COMMENT ON FUNCTION brain.normalize_text(headline text, body text) IS 'Headline and body lowercased with runs of white space folded: the key of exact dedup.';
CREATE FUNCTION brain.note_use(memory_ids bigint[], how text DEFAULT 'cite'::text, session bigint DEFAULT NULL::bigint) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
COMMENT ON FUNCTION brain.note_use(memory_ids bigint[], how text, session bigint) IS 'Counts memories a session was shown as used (how: cite by default; recall, rate and supersede count by themselves). Returns the number of injections of the session that showed any of them.';
CREATE FUNCTION brain.observe(text text, kind text DEFAULT 'fact'::text, project text DEFAULT ''::text, origin text DEFAULT 'observed'::text, source_system text DEFAULT NULL::text, source_ref text DEFAULT NULL::text, source_agent text DEFAULT NULL::text, session_id bigint DEFAULT NULL::bigint, metadata jsonb DEFAULT NULL::jsonb, embeddings double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, check_only boolean DEFAULT false, fold boolean DEFAULT NULL::boolean) RETURNS TABLE(item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint, similarity real, embedding_input text, error_code text, error text, provisional boolean, redacted jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010a-observe-batch.sql
$$;
COMMENT ON FUNCTION brain.observe(text text, kind text, project text, origin text, source_system text, source_ref text, source_agent text, session_id bigint, metadata jsonb, embeddings double precision[], embedding_space text, check_only boolean, fold boolean) IS 'brain.observe_batch for one text.';
CREATE FUNCTION brain.observe_batch(texts text[], kind text DEFAULT 'fact'::text, project text DEFAULT ''::text, origin text DEFAULT 'observed'::text, source_system text DEFAULT NULL::text, source_refs text[] DEFAULT NULL::text[], source_agent text DEFAULT NULL::text, session_id bigint DEFAULT NULL::bigint, metadata jsonb[] DEFAULT NULL::jsonb[], embeddings double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, check_only boolean DEFAULT false, fold boolean DEFAULT NULL::boolean, contexts text[] DEFAULT NULL::text[], threads text[] DEFAULT NULL::text[], positions integer[] DEFAULT NULL::integer[]) RETURNS TABLE(item integer, chunk integer, action text, memory_id bigint, duplicate_of bigint, similarity real, embedding_input text, error_code text, error text, provisional boolean, redacted jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/010a-observe-batch.sql
$$;
COMMENT ON FUNCTION brain.observe_batch(texts text[], kind text, project text, origin text, source_system text, source_refs text[], source_agent text, session_id bigint, metadata jsonb[], embeddings double precision[], embedding_space text, check_only boolean, fold boolean, contexts text[], threads text[], positions integer[]) IS 'Stores many observed texts (chat turns, tool output, events) or artifact chunks in one call: derived headlines, long texts split into chunks sharing a source_ref, exact and near-identical dedup only. embeddings holds one row per chunk in order (check_only => true returns the chunks). An item the gate refuses is reported (action rejected, error_code) and the rest stored. Secrets in a text are redacted ([redacted:KIND]) and reported in `redacted` (kind, start, end in the text as sent); a secret in metadata or a source_ref refuses its item (BR007), in project, source_system or source_agent the batch. A batch of index_defer_rows (100) chunks or more leaves its vectors out of the HNSW index, searched exactly, until brain.index_vectors indexes them and runs their near-identical dedup: such rows (and rows queued without embeddings) are reported created with provisional = true, and brain.write_outcomes gives their final outcome. Near-identical rows fold only when they carry the same distinguishing terms; fold => false (or the space''s fold_observed = false) stores them apart, deduplicated exactly only.';
CREATE FUNCTION brain.observe_transcript(turns jsonb, source_system text, project text DEFAULT ''::text, source_agent text DEFAULT NULL::text, embeddings double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, check_only boolean DEFAULT false) RETURNS TABLE(item integer, ref text, chunk integer, action text, memory_id bigint, duplicate_of bigint, similarity real, embedding_input text, error_code text, error text, provisional boolean)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/019-hooks.sql
$_$;
COMMENT ON FUNCTION brain.observe_transcript(turns jsonb, source_system text, project text, source_agent text, embeddings double precision[], embedding_space text, check_only boolean) IS 'Observes the turns of an agent session transcript (a JSON array of {ref, role user|assistant, text, at}) that no memory of source_system carries yet: each (its capturable text, brain.capturable_turns: no injected context, nothing marked <private>, spans closed across one speaker''s messages) as an observed fact "User: …" or "Assistant: …" with source_ref = the turn''s ref and metadata {role, at, turn}, through brain.observe_batch (the gate, chunks, dedup). Running it again on a longer transcript stores only the turns added since. A reply that cites a memory (#id) shown to a session booted for the turn''s client session (its ref''s part before the first /, client_info.client_session) counts as a use of it (brain.injection_use, how cite). check_only => true returns the chunks to embed; one row per chunk or refused turn, with the turn''s ref. Calls of one source system run one at a time (an advisory lock), so a turn is stored once even when two capture the same transcript at once; a capture may be cut into batches of turns, each its own call.';
CREATE FUNCTION brain.open_session(source text, project text DEFAULT ''::text, task text DEFAULT NULL::text, cwd text DEFAULT NULL::text, pid integer DEFAULT NULL::integer, pid_started_at timestamp with time zone DEFAULT NULL::timestamp with time zone, host text DEFAULT NULL::text, client_info jsonb DEFAULT '{}'::jsonb, host_processes jsonb DEFAULT NULL::jsonb, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/015a-boot-payload.sql
$_$;
COMMENT ON FUNCTION brain.open_session(source text, project text, task text, cwd text, pid integer, pid_started_at timestamp with time zone, host text, client_info jsonb, host_processes jsonb, now timestamp with time zone) IS 'Registers a session as brain.boot_session does (ending gone ones, and the old session of the same source, cwd, pid and pid start time) without its payload: {session_id, at (the session''s start, the clock of its payload), rebooted, sessions_ended}. Then brain.boot_payload(session_id, ..., now => at), on a replica or here, and brain.record_boot.';
CREATE FUNCTION brain.pending_action_items(session bigint) RETURNS TABLE(id bigint, text text, project text, for_source text, created_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.pending_action_items(session bigint) IS 'Action items waiting for this session: of its project (or global), for its source or any, raised by another session.';
CREATE FUNCTION brain.pending_embeddings(embedding_space text DEFAULT NULL::text, max_results integer DEFAULT 64) RETURNS TABLE(memory_id bigint, embedding_input text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/006-write-api.sql
$$;
COMMENT ON FUNCTION brain.pending_embeddings(embedding_space text, max_results integer) IS 'Memories that have no embedding in a space (the active one by default), and queued writes whose dedup is still owed, queued writes first: the work list of `brain worker` and `brain reembed`. Texts the embedder refused are left out until their next try is due, and for good once parked (brain.embedding_failed).';
CREATE FUNCTION brain.pin(id bigint, source text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ BEGIN RETURN brain._set_pinned(id, true, source); END $$;
COMMENT ON FUNCTION brain.pin(id bigint, source text) IS 'Pins a memory (loaded at boot, weighted up in search). False when it already was.';
CREATE FUNCTION brain.preview(body text, max_chars integer DEFAULT 160) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.preview(body text, max_chars integer) IS 'The start of a body on one line, at most max_chars characters.';
CREATE FUNCTION brain.prompt_context(prompt text, query_embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, project text DEFAULT NULL::text, exclude_source_system text DEFAULT NULL::text, exclude_ref_prefix text DEFAULT NULL::text, token_budget integer DEFAULT NULL::integer, max_results integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019a-hooks-prompt.sql
$$;
COMMENT ON FUNCTION brain.prompt_context(prompt text, query_embedding double precision[], embedding_space text, project text, exclude_source_system text, exclude_ref_prefix text, token_budget integer, max_results integer) IS 'The few memories a prompt brings up, for a hook to add to the agent''s context: brain.search over the prompt, each hit kept on its own verdict (brain.search_result''s verdict at least the setting min_relevance, or a skill the prompt triggers: a prompt no memory is about gets nothing, a prompt about one topic no lines of another: a short line lacking two words of the question rarer than all it holds, or one another relevant hit names better, stating every word of the question it states and more, or, for a prompt that says a value changed rather than asks, one that states another thing''s value (brain._speaks_of_stated), is left out unless it is marked older or stale), leaving out flagged memories, what the boot of the calling session showed (its boot injection), and the memories of exclude_source_system whose source_ref starts with exclude_ref_prefix (the calling session''s own turns, "<client session>/") stored after that session''s last compaction (brain.hand_off_transcript, compaction => true, or a session of it booted with client_info.start compact): those the agent has in front of it. Stored text is quoted (brain.quote_text), as in the boot payload. A captured turn is shown as the reply that answers it (for a prompt, the last assistant turn before the next prompt), whole up to its share of the budget; a prompt that says something (not one that only asks, brain._only_asks) comes first in its own words, then " → " and that reply, the two within the line''s share; in search''s order (a current fact before the older memories and turns it may contradict, a reply in the place of the prompt that only asked); each line says its age ("- #12 fact, 3d ago: ..."), and a memory or turn that a newer one among the results may contradict (search''s newer_related) says so: "(older: #N is newer and may replace it)", and an active one how a person confirms it ("; if so: brain supersede <id>"); a line that states the old value of a superseded memory says so: "(depends on #<superseded>, changed by #<change>: brain stale)". At most prompt_context_max (5) lines, never over prompt_context_tokens (500, brain.estimate_tokens), inside <pybrain-context>…</pybrain-context> (what the capture hooks never store back); the prompt is searched for without what it marks <private>, and by its first 4000 characters. text is NULL when nothing is relevant.';
CREATE FUNCTION brain.prune(dry_run boolean DEFAULT true, older_than interval DEFAULT '30 days'::interval, max_rows integer DEFAULT 50, source text DEFAULT NULL::text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, kind text, state text, headline text, left_at timestamp with time zone, action text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/012-maintenance.sql
$$;
COMMENT ON FUNCTION brain.prune(dry_run boolean, older_than interval, max_rows integer, source text, now timestamp with time zone) IS 'Deletes tombstoned and archived memories that left the active state more than older_than ago (at least 1 day), at most max_rows, never rules or pinned memories, never a memory a superseded version points to. Dry run by default: lists what it would delete. Each deletion leaves an audit row with the last snapshot.';
CREATE FUNCTION brain.query_lexemes(query text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.query_lexemes(query text) IS 'The query''s words, stemmed (english) and OR-ed: a memory matches the lexical leg if it shares any.';
CREATE FUNCTION brain.quote_text(t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.quote_text(t text) IS 'A stored text as a one-line JSON string literal, every quote, line break and invisible character escaped: how the boot payload shows stored text, so that it cannot close its quotes or start a line (a heading, a list item) of the payload.';
CREATE FUNCTION brain.rank_weight(kind text, origin text, pinned boolean, importance real, upvotes integer, downvotes integer, last_touch timestamp with time zone, halflife_days double precision, now timestamp with time zone) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005c-search-run.sql
$$;
COMMENT ON FUNCTION brain.rank_weight(kind text, origin text, pinned boolean, importance real, upvotes integer, downvotes integer, last_touch timestamp with time zone, halflife_days double precision, now timestamp with time zone) IS 'The factor that multiplies a result''s fused score: fact decay (0.5 + 0.5 x decay), rating (1 + 0.05 x (up - down), clamped to +-10), pin (x1.2), overlay origin (x1.2), importance (0.75 + 0.5 x importance). docs/ranking.md.';
CREATE FUNCTION brain.rate(id bigint, direction text, source text DEFAULT NULL::text, request_key text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
COMMENT ON FUNCTION brain.rate(id bigint, direction text, source text, request_key text) IS 'Counts a rating (up or down). The rating (up - down) weighs the memory in search. With a request_key, the same call sent again is answered as the first time and counts nothing (docs/sql-api.md, "Requests sent again").';
CREATE FUNCTION brain.recall(id bigint) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.recall(id bigint) IS 'The whole memory as JSON, and counts the access; folds lists the near-identical items folded into it (brain.memory_fold), each with its own text, metadata, provenance and time. A superseded memory carries a banner naming the current version at the end of its supersede chain; a forgotten one says why. Its halves, for a client that reads from a replica: brain.recall_view (the read) and brain.count_recall (the count).';
CREATE FUNCTION brain.recall_view(id bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.recall_view(id bigint) IS 'The whole memory as brain.recall returns it, counting nothing: what a streaming replica serves of a recall (brain.count_recall counts it on the primary).';
CREATE FUNCTION brain.recent_errors(max_results integer DEFAULT 20) RETURNS TABLE(event_id bigint, tool text, channel text, session_id bigint, started_at timestamp with time zone, error_code text, error text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/016-observability.sql
$$;
COMMENT ON FUNCTION brain.recent_errors(max_results integer) IS 'The latest failed tool calls and commands, newest first.';
CREATE FUNCTION brain.recent_handoffs(projects text[] DEFAULT NULL::text[], max_results integer DEFAULT 20) RETURNS TABLE(session_id bigint, source text, project text, text text, created_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.recent_handoffs(projects text[], max_results integer) IS 'The handoffs sessions left for the next one, newest first (at most 200): those of ended sessions and those kept for a source whose session had already ended.';
CREATE FUNCTION brain.record_boot(session bigint, payload jsonb, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/015a-boot-payload.sql
$$;
COMMENT ON FUNCTION brain.record_boot(session bigint, payload jsonb, now timestamp with time zone) IS 'Records what a session''s boot payload showed (brain.boot_event: budget, tokens, sections, what was dropped; the injection of every memory it shows), as brain.boot_session does: the primary''s last step of a session start whose payload a replica read (brain.open_session, brain.boot_payload).';
CREATE FUNCTION brain.record_injection(trigger text, items bigint[] DEFAULT '{}'::bigint[], tokens integer DEFAULT 0, truncated boolean DEFAULT false, session bigint DEFAULT NULL::bigint, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
COMMENT ON FUNCTION brain.record_injection(trigger text, items bigint[], tokens integer, truncated boolean, session bigint, now timestamp with time zone) IS 'Records one injection of memory into an agent''s context: trigger (boot, search, prompt, pack, trajectory), the memory ids shown, the estimated tokens, whether the budget cut it, and the session (default: SET LOCAL brain.session). boot_session, prompt_context, load_pack and recall record theirs; a client records the search results it hands an agent.';
CREATE FUNCTION brain.record_tool_event(tool text, started_at timestamp with time zone, latency_ms double precision, ok boolean, channel text DEFAULT 'sql'::text, session bigint DEFAULT NULL::bigint, error_code text DEFAULT NULL::text, error text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/016-observability.sql
$$;
COMMENT ON FUNCTION brain.record_tool_event(tool text, started_at timestamp with time zone, latency_ms double precision, ok boolean, channel text, session bigint, error_code text, error text) IS 'Records one tool call or CLI command (tool, channel, session, start, latency, outcome, error code) and refreshes the session''s heartbeat. latency_ms is finite (BR009 for NaN or infinity; a negative one is 0); a start after the server''s clock is stored as the server''s time.';
CREATE FUNCTION brain.record_trajectory(problem text, steps jsonb DEFAULT '[]'::jsonb, outcome text DEFAULT ''::text, headline text DEFAULT NULL::text, project text DEFAULT ''::text, category text DEFAULT 'procedural'::text, tags text[] DEFAULT '{}'::text[], importance double precision DEFAULT NULL::double precision, metadata jsonb DEFAULT '{}'::jsonb, embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, source_agent text DEFAULT NULL::text, session_id bigint DEFAULT NULL::bigint, source_system text DEFAULT NULL::text, source_ref text DEFAULT NULL::text, source_hash text DEFAULT NULL::text, supersedes bigint DEFAULT NULL::bigint, reason text DEFAULT NULL::text, on_related text DEFAULT 'store'::text, redact boolean DEFAULT false, check_only boolean DEFAULT false) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024a-trajectories-record.sql
$$;
COMMENT ON FUNCTION brain.record_trajectory(problem text, steps jsonb, outcome text, headline text, project text, category text, tags text[], importance double precision, metadata jsonb, embedding double precision[], embedding_space text, source_agent text, session_id bigint, source_system text, source_ref text, source_hash text, supersedes bigint, reason text, on_related text, redact boolean, check_only boolean) IS 'Records how a problem was solved: a memory of kind trajectory (headline: given or the problem''s first words; body: the problem and the outcome, which search and the embedding see) with its ordered steps (action, tool, command, files, result, failed) in brain.trajectory. Through the write gate (secrets refused in every field and step; with redact => true, for text taken from a transcript, replaced, what is marked <private> removed from every field and step as the hooks do, brain.capturable_text, and each result cut to its telling lines, brain.result_lines; steps flagged as any text), exact and semantic dedup: the same solution recorded again folds into the first and counts in times_recorded; a related one is stored (on_related => ''store'', the default) or refused or superseded. supersedes => <id> with a reason replaces an older trajectory. check_only => true validates and returns the embedding input.';
CREATE FUNCTION brain.redact_secrets(t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/001b-text-clean.sql
$$;
COMMENT ON FUNCTION brain.redact_secrets(t text) IS 'The text with each secret replaced by [redacted:KIND] (the key of a `key = value` line and the rest of a URL are kept).';
CREATE FUNCTION brain.refile_sessions(folders jsonb, host text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019c-hooks-projects.sql
$$;
COMMENT ON FUNCTION brain.refile_sessions(folders jsonb, host text) IS 'Files the global sessions an older release recorded (project '''', started before the migration that files repositories by identity) under the project of the folder they ran in: folders is [{"cwd", "project"}] (brain.unfiled_folders lists the folders, brain.repository_project names each one''s project), of host''s sessions (and those that name none). Their handoffs and the turns captured from their transcripts (source_ref <client session>/…, and what was recorded from them) go with them, each memory audited (update, refiled); a turn its project holds already word for word stays global (kept). Returns {sessions, handoffs, turns, kept}. Write access.';
CREATE FUNCTION brain.related_memory(memory_id bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/005d-search-reads.sql
$$;
COMMENT ON FUNCTION brain.related_memory(memory_id bigint) IS 'The memory a stored one may contradict or replace: the nearest active memory of its kind and project, at least the space''s related similarity, differing in distinguishing terms only (a number, a version, a name). {id, headline, similarity, created_at, terms: {this, that}, hint}; NULL when none. Reported by writes (Brain.remember, brain remember, the MCP remember tool); never refuses.';
CREATE FUNCTION brain.relevance(sim double precision, lex double precision, c double precision[]) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005-search.sql
$$;
COMMENT ON FUNCTION brain.relevance(sim double precision, lex double precision, c double precision[]) IS 'Calibrated relevance of a result (docs/ranking.md): the logistic of its evidence. Vector: slope x (similarity - center), the space''s; lexical: lex_slope x (BM25 share - lex_center); both: bias + w_vec x vector + w_lex x lexical. c = {center, slope, lex_center, lex_slope, bias, w_vec, w_lex}; NULL when neither evidence is known.';
CREATE FUNCTION brain.remember(kind text, headline text, body text DEFAULT ''::text, category text DEFAULT NULL::text, origin text DEFAULT 'explicit'::text, project text DEFAULT ''::text, severity text DEFAULT NULL::text, tags text[] DEFAULT '{}'::text[], importance double precision DEFAULT NULL::double precision, pinned boolean DEFAULT false, skill_trigger jsonb DEFAULT NULL::jsonb, metadata jsonb DEFAULT '{}'::jsonb, embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, source_agent text DEFAULT NULL::text, session_id bigint DEFAULT NULL::bigint, source_system text DEFAULT NULL::text, source_ref text DEFAULT NULL::text, source_hash text DEFAULT NULL::text, expires_at timestamp with time zone DEFAULT NULL::timestamp with time zone, halflife_days double precision DEFAULT NULL::double precision, status text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, due_at timestamp with time zone DEFAULT NULL::timestamp with time zone, what_was_wrong text DEFAULT NULL::text, what_is_correct text DEFAULT NULL::text, error_message text DEFAULT NULL::text, command_attempted text DEFAULT NULL::text, related_files text[] DEFAULT '{}'::text[], complexity text DEFAULT NULL::text, check_only boolean DEFAULT false, on_related text DEFAULT 'refuse'::text, reason text DEFAULT NULL::text) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/006-write-api.sql
$$;
COMMENT ON FUNCTION brain.remember(kind text, headline text, body text, category text, origin text, project text, severity text, tags text[], importance double precision, pinned boolean, skill_trigger jsonb, metadata jsonb, embedding double precision[], embedding_space text, source_agent text, session_id bigint, source_system text, source_ref text, source_hash text, expires_at timestamp with time zone, halflife_days double precision, status text, priority integer, due_at timestamp with time zone, what_was_wrong text, what_is_correct text, error_message text, command_attempted text, related_files text[], complexity text, check_only boolean, on_related text, reason text) IS 'Stores a memory through the write gate: validation (BR001-BR007, BR009), exact dedup, semantic dedup against the active embedding space (near-identical with the same distinguishing terms: folded, the longer text kept and the other recorded in brain.memory_fold; related and not a distinct fact: the on_related policy decides — refuse (BR008, the default), store (created, duplicate_of names the related memory) or supersede (the related memory, a distinct fact of another value too, is superseded by the new one, with reason or a generated one; none found: BR010 saying why)), extraction of tags, people, topics and action items, and an audit row. Without an embedding the memory is stored and queued for `brain worker`. check_only => true validates and returns the embedding input without writing.';
CREATE FUNCTION brain.render_pack(name text, token_budget integer DEFAULT NULL::integer, session bigint DEFAULT NULL::bigint, record boolean DEFAULT true) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $$
    -- the body: sql/functions/024b-packs.sql
$$;
COMMENT ON FUNCTION brain.render_pack(name text, token_budget integer, session bigint, record boolean) IS 'Renders a context pack within its token budget (or a smaller one) by the boot payload''s rules: one line per member, "- #id kind" and the headline as a quoted JSON string (and, for a member that states the old value of a superseded memory, "(depends on #<superseded>, changed by #<change>: brain stale)"), members that do not fit left out (truncated, left_out). Members are current: a superseded one is replaced by its successor, a forgotten one drops out (or its replacement comes in), flagged ones are left out; when they changed, the pack''s version moves. A pack whose description or query shows injection signals (brain.injection_signals) has them in flag_reasons, and its heading says FLAGGED with them instead of showing its query. Records the injection (trigger pack) unless record => false.';
CREATE FUNCTION brain.repository_project(identities text[], label text, fallback text DEFAULT NULL::text, claim boolean DEFAULT true) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019c-hooks-projects.sql
$$;
COMMENT ON FUNCTION brain.repository_project(identities text[], label text, fallback text, claim boolean) IS 'The project of a repository, named by what it proves: identities are its remotes (remote:<URL>, normalized so that git@github.com:a/b.git and https://github.com/a/b are one: brain._remote_key), its root commits (root:<commit>), or, for a folder outside git or a repository with neither, path:<host>:<folder>; label is its folder''s name. The project of the first identity already filed (in the order given) is returned, and the others are filed under it too (a remote added later, a clone of the same history); fallback (path:<host>:<folder>) gives the folder''s project from before the repository had a commit or a remote, unless a repository of its own holds that project. Else, with claim (the default), the repository is filed under its folder''s name when no other repository has that name, else under name@<short id> (the root commit''s first 7 digits, or of the digest of the remote): two repositories of one folder name are two projects, and the projects an older release named by folder stay with the first repository seen with that name. Without claim, NULL when nothing is filed yet.';
CREATE FUNCTION brain.reset_setting(name text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.reset_setting(name text) IS 'Takes this workspace''s override of a setting away: its default applies. Returns the default.';
CREATE FUNCTION brain.restore(id bigint, source text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.restore(id bigint, source text) IS 'Brings an archived or forgotten (tombstoned) memory back to active. A superseded one is restored with brain.unsupersede.';
CREATE FUNCTION brain.result_lines(t text, chars integer DEFAULT 500) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/024-trajectories.sql
$_$;
COMMENT ON FUNCTION brain.result_lines(t text, chars integer) IS 'What a trajectory keeps of a tool result taken from a transcript: the whole result when it fits in chars (500); else its last line, the lines that report an error, exception, failure, assertion, refusal or timeout (the latest first), its first line and its last lines, as many as fit, in their order, with … where lines were left out.';
CREATE FUNCTION brain.retry_failed_embeddings(embedding_space text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/017-embedding-failures.sql
$$;
COMMENT ON FUNCTION brain.retry_failed_embeddings(embedding_space text) IS 'Forgets the failures of a space (the active one by default): parked and waiting texts are due again for `brain worker`, with a fresh count of attempts. The number of texts released.';
CREATE FUNCTION brain.revoke_token(token_id bigint DEFAULT NULL::bigint, name text DEFAULT NULL::text, workspace_id bigint DEFAULT NULL::bigint) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/022-serve.sql
$$;
COMMENT ON FUNCTION brain.revoke_token(token_id bigint, name text, workspace_id bigint) IS 'Revokes a token by id or name (admins of the workspace and the owner): the next request that carries it is refused. revoked is false when it was revoked already.';
CREATE FUNCTION brain.revoke_workspace(role text, workspace_id bigint) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025-tenancy.sql
$$;
COMMENT ON FUNCTION brain.revoke_workspace(role text, workspace_id bigint) IS 'Takes a role''s access to a workspace away (admins of the workspace and the owner); revoked is false when it had none.';
CREATE FUNCTION brain.scan_secrets(t text) RETURNS TABLE(kind text, start_at integer, end_at integer)
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001b-text-clean.sql
$_$;
COMMENT ON FUNCTION brain.scan_secrets(t text) IS 'The secrets in a text: each one''s kind and its position (first and last character, counted from 1). Never the value. The text is read as sent, backwards, and with each way of hiding a token undone (NFKC and look-alike letters, entities and escapes, base64 and hex, spaced-out characters, pieces joined, markdown and HTML marks and table cells, groups of four): a hidden secret is reported where its stretch stands.';
CREATE FUNCTION brain.scan_stored_secrets(max_rows integer DEFAULT 1000, after_id bigint DEFAULT 0) RETURNS TABLE(memory_id bigint, state text, field text, kinds text[])
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/018-safety.sql
$$;
COMMENT ON FUNCTION brain.scan_stored_secrets(max_rows integer, after_id bigint) IS 'Finds stored memories (any state) and annotations of the current workspace whose text holds what the secret scanner finds today: the id, the state, the field and the kinds, never the value (admins of the workspace). Pages through max_rows memories after after_id; forget or supersede what it finds.';
CREATE FUNCTION brain.scratch_get(key text, session bigint DEFAULT NULL::bigint, project text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014a-sessions-scratch.sql
$$;
COMMENT ON FUNCTION brain.scratch_get(key text, session bigint, project text) IS 'A scratch note''s value, or NULL.';
CREATE FUNCTION brain.scratch_list(session bigint DEFAULT NULL::bigint, project text DEFAULT NULL::text) RETURNS TABLE(key text, value text, updated_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014a-sessions-scratch.sql
$$;
COMMENT ON FUNCTION brain.scratch_list(session bigint, project text) IS 'The scratch notes of a session or a project.';
CREATE FUNCTION brain.scratch_set(key text, value text, session bigint DEFAULT NULL::bigint, project text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/014a-sessions-scratch.sql
$_$;
COMMENT ON FUNCTION brain.scratch_set(key text, value text, session bigint, project text) IS 'Sets a small note (at most 4000 characters) of a session or a project: working state that is not a memory.';
CREATE FUNCTION brain.search(query text, query_embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, kinds text[] DEFAULT NULL::text[], categories text[] DEFAULT NULL::text[], project text DEFAULT NULL::text, tags text[] DEFAULT NULL::text[], people text[] DEFAULT NULL::text[], created_after timestamp with time zone DEFAULT NULL::timestamp with time zone, created_before timestamp with time zone DEFAULT NULL::timestamp with time zone, include_superseded boolean DEFAULT false, include_archived boolean DEFAULT false, include_dormant boolean DEFAULT false, as_of timestamp with time zone DEFAULT NULL::timestamp with time zone, max_results integer DEFAULT 10, now timestamp with time zone DEFAULT NULL::timestamp with time zone, source_system text DEFAULT NULL::text, source_ref text DEFAULT NULL::text, min_relevance double precision DEFAULT NULL::double precision, neighbours integer DEFAULT 0) RETURNS SETOF brain.search_result
    LANGUAGE plpgsql SECURITY DEFINER ROWS 10
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    SET "hnsw.iterative_scan" TO 'relaxed_order'
    SET "hnsw.ef_search" TO '40'
    SET "hnsw.max_scan_tuples" TO '20000'
    SET jit TO 'off'
    SET "pg_trgm.word_similarity_threshold" TO '0.5'
    SET enable_seqscan TO 'on'
    AS $_$
    -- the body: sql/functions/005c-search-run.sql
$_$;
COMMENT ON FUNCTION brain.search(query text, query_embedding double precision[], embedding_space text, kinds text[], categories text[], project text, tags text[], people text[], created_after timestamp with time zone, created_before timestamp with time zone, include_superseded boolean, include_archived boolean, include_dormant boolean, as_of timestamp with time zone, max_results integer, now timestamp with time zone, source_system text, source_ref text, min_relevance double precision, neighbours integer) IS 'Hybrid search: HNSW vector leg (when query_embedding is given), ranked full-text leg, trigram leg for short queries; fused by reciprocal rank fusion and weighted by decay, rating, pin, importance and overlay origin (docs/ranking.md); decay lowers a fact''s rank and never hides it (dormant facts are searched; include_dormant is accepted and has no effect). Matching skills come first, marked via_skill_trigger. Each result stands on its own verdict (its relevance with the query''s words no memory holds counted, at least min_relevance, default the setting): no unrelated tail, and no result at all when nothing is relevant (min_relevance 0 lists the nearest). A captured prompt that only asks gives its place to the reply that answers it (the prompt follows, neighbour_of the reply); a run of near-identical observed turns of one session (thread, or transcript: vectors at least the space''s near_identical similar; headline trigrams at 0.8 without a query vector) stands as its best, the others folded into it (metadata.folded of that result: their ids, search''s, not stored; a prompt beside a folded reply goes with it); an older memory, captured turn or superseded memory that a newer authored one among the results may contradict (newer_related: the current end of that chain; of a fact, a newer captured turn stating another value too) comes right after it; score is the ranking''s figure and never rises down the list (relevance is the evidence). The floor''s verdict of a query that says something before it asks counts the unknown words of its question only (brain._asked_text). Filters: kinds, categories, project (plus global), tags and people (all given), created range, states, as_of, provenance (source_system; source_ref exact, or every ref under it when it ends in /). Headlines and previews only: bodies come from brain.recall.';
CREATE FUNCTION brain.search_term(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.search_term(t text) IS 'A word or phrase as the dictionary of words for the same thing holds it: one english lexeme, or a phrase of two or more (lower-cased, matched as a phrase of its lexemes); NULL for stop words only.';
CREATE FUNCTION brain.secret_rules() RETURNS TABLE(rule integer, kind text, pattern text, grp integer, "check" text, source text, hints text[])
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/001a-text-secret-rules.sql
$_$;
COMMENT ON FUNCTION brain.secret_rules() IS 'The secret scanner''s rules in order (an earlier rule wins an overlap): the kind reported, the pattern, the capture group holding the secret, the extra check and the public rule it follows (docs/security.md).';
CREATE FUNCTION brain.sessions_channel() RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.sessions_channel() IS 'The LISTEN/NOTIFY channel of the current workspace (members only): notified, with an empty payload, when a session starts, ends or changes task, a handoff is left, or an action item is raised or acknowledged. Its name is random, so no other workspace can listen to it.';
CREATE FUNCTION brain.set_setting(name text, value jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.set_setting(name text, value jsonb) IS 'Overrides a setting for this workspace.';
CREATE FUNCTION brain.setting(name text) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.setting(name text) IS 'A setting of this workspace: its override, else the default from brain.setting_defaults(). An override outside the setting''s range (brain.setting_ranges(): stored before the range narrowed) reads as the default.';
CREATE FUNCTION brain.setting_defaults() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.setting_defaults() IS 'Every setting and its default value.';
CREATE FUNCTION brain.setting_ranges() RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/002-settings.sql
$$;
COMMENT ON FUNCTION brain.setting_ranges() IS 'The range of each numeric setting (min, max, and integer when it must be a whole number): brain.set_setting refuses values outside it, brain.setting reads a stored value outside it as the default, and the functions whose arguments default to a setting (boot_payload''s token_budget, prompt_context''s token_budget and max_results) take its range.';
CREATE FUNCTION brain.stale(project text DEFAULT NULL::text, change bigint DEFAULT NULL::bigint, max_results integer DEFAULT 50) RETURNS TABLE(id bigint, kind text, memory_project text, headline text, old_values text[], changed_id bigint, changed_headline text, change_id bigint, change_headline text, marked_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007a-revise-stale.sql
$$;
COMMENT ON FUNCTION brain.stale(project text, change bigint, max_results integer) IS 'What supersedes left to review: the active memories that state the old value of a superseded memory (its distinguishing value terms: a port, a version, a host, a path, brain._changed_values; of the same project, written before the change, not stating the new value), each with its project (memory_project), the values, the superseded memory (changed_id) and the one that replaced it (change_id). A supersede marks them (brain.supersede, a write with on_related => ''supersede'', a trajectory''s supersedes), its undo (brain.unsupersede) takes the marks away; search ranks a marked memory below the current statement and every reader shows "(depends on #<changed>, changed by #<change>: brain stale)". Filtered by project (plus global) and by a change (either id). Newest first, at most max_results (50).';
CREATE FUNCTION brain.stats() RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/008-curation.sql
$$;
COMMENT ON FUNCTION brain.stats() IS 'Counts for this workspace: memories by kind (active) and state, dormant facts, pins, skills, annotations, the active space, its pending embeddings, the texts its embedder refused (retrying, parked) and the vectors waiting for its HNSW index.';
CREATE FUNCTION brain.storage_state() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/023-ui.sql
$$;
COMMENT ON FUNCTION brain.storage_state() IS 'Disk use of the database and of each table of schema brain (indexes included, all workspaces together), the vector indexes of the current workspace''s spaces with their size and whether they are valid, and the vectors waiting for brain.index_vectors.';
CREATE FUNCTION brain.supersede(old_id bigint, headline text, reason text, body text DEFAULT ''::text, source text DEFAULT NULL::text, inherit_pinned boolean DEFAULT false, embedding double precision[] DEFAULT NULL::double precision[], embedding_space text DEFAULT NULL::text, severity text DEFAULT NULL::text, category text DEFAULT NULL::text, tags text[] DEFAULT NULL::text[], skill_trigger jsonb DEFAULT NULL::jsonb, metadata jsonb DEFAULT NULL::jsonb, session_id bigint DEFAULT NULL::bigint, check_only boolean DEFAULT false, on_related text DEFAULT 'refuse'::text) RETURNS brain.write_result
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.supersede(old_id bigint, headline text, reason text, body text, source text, inherit_pinned boolean, embedding double precision[], embedding_space text, severity text, category text, tags text[], skill_trigger jsonb, metadata jsonb, session_id bigint, check_only boolean, on_related text) IS 'Replaces a belief: the new text goes through the same write gate (kind, project and kind details are inherited; pinning only with inherit_pinned; a captured turn or text is replaced by an authored memory: origin explicit, the given category and source, none of the record''s transcript reference, role or tags), the old memory is kept, marked superseded and linked to the new one, and leaves default reads. A rule''s old version becomes DEPRECATED. reason is required. on_related (refuse, store, supersede) decides what a related hit on another memory does, as in brain.remember.';
CREATE FUNCTION brain.trajectory_problem(prompts text[]) RETURNS integer
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/024-trajectories.sql
$$;
COMMENT ON FUNCTION brain.trajectory_problem(prompts text[]) IS 'Which of a transcript''s prompts (in order, the last one the prompt whose tool calls end the work) started the work a trajectory records: counting back from the last, a prompt that only acknowledges or confirms ("Good. Do that.", "yes, go ahead": a few words of assent, reference or going on, brain._acknowledges; or nothing but <private> text) continues the problem of the one before it. Its number, from 1; NULL for none.';
CREATE FUNCTION brain.trajectory_text(id bigint) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/024a-trajectories-record.sql
$_$;
COMMENT ON FUNCTION brain.trajectory_text(id bigint) IS 'A trajectory as an agent reads it: headline, problem, numbered steps (failed attempts marked) and outcome, each stored text a quoted JSON string. NULL for another kind.';
CREATE FUNCTION brain.transcript_handoff(turns jsonb, event text, client text DEFAULT 'the agent'::text, transcript text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
COMMENT ON FUNCTION brain.transcript_handoff(turns jsonb, event text, client text, transcript text) IS 'The handoff a hook writes from a session transcript (turns as brain.observe_transcript takes them) when the session ends or is compacted: how many prompts and replies, the last request and the last reply (each cut to fit handoff_max_chars, left out when it looks like it holds a secret), of the turns'' brain.capturable_text (no injected context, nothing marked <private>). NULL when the turns hold no prompt and no reply: there is nothing to hand off.';
CREATE FUNCTION brain.transcript_snapshot(turns jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019-hooks.sql
$$;
COMMENT ON FUNCTION brain.transcript_snapshot(turns jsonb) IS 'The snapshot a capture hook writes with its handoff, from the turns of a transcript (as brain.transcript_handoff takes them, of their brain.capturable_text): summary, the first request that is not only an acknowledgement; status, whether the last request was answered; pending, that request when it was not; blockers empty. Each text cut to 300 characters, left out when it looks like it holds a secret. NULL when the turns hold no request.';
CREATE FUNCTION brain.trim_space(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$
    -- the body: sql/functions/001-text.sql
$_$;
COMMENT ON FUNCTION brain.trim_space(t text) IS 'The text without leading and trailing white space of any kind.';
CREATE FUNCTION brain.uncaptured_sessions(source text, project text DEFAULT ''::text, cwd text DEFAULT NULL::text, host text DEFAULT NULL::text, max_results integer DEFAULT 3, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(session_id bigint, session_source text, client_session text, transcript text, end_reason text, started_at timestamp with time zone, ended_at timestamp with time zone)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019b-hooks-uncaptured.sql
$$;
COMMENT ON FUNCTION brain.uncaptured_sessions(source text, project text, cwd text, host text, max_results integer, now timestamp with time zone) IS 'Hands out the sessions of a seat (project and host; and the folder, cwd, of a session without a project; of any source, session_source saying which: the harnesses share a project) that ended without a capture hook (rebooted, heartbeat expired, process gone: the client crashed or its hook failed), or whose capture hook left turns it had no time to store (brain.leave_capture), and whose transcript (client_info.transcript, client_info.client_session, as the hooks boot them) was never captured: the newest first, at most max_results (3), started in the last 7 days, each twice at most (client_info.capture_attempts; a capture left part-done ten times). The next session start captures them (brain.capture_ended_session).';
CREATE FUNCTION brain.unfiled_folders(host text DEFAULT NULL::text) RETURNS TABLE(cwd text, first_started timestamp with time zone, global_sessions bigint, projects text[])
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/019c-hooks-projects.sql
$$;
COMMENT ON FUNCTION brain.unfiled_folders(host text) IS 'The folders (cwd) of the sessions an older release recorded (started before the migration that files repositories by identity) that a client should file now, oldest first: each folder with a global session (project ''''), and, while no repository is filed in the workspace, every folder (so that the repository that made a project keeps its name). Sessions of host (or that name none). With the first start, the number of global sessions and the projects its sessions had. brain init files them (brain.repository_project, brain.refile_sessions).';
CREATE FUNCTION brain.unpin(id bigint, source text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ BEGIN RETURN brain._set_pinned(id, false, source); END $$;
COMMENT ON FUNCTION brain.unpin(id bigint, source text) IS 'Unpins a memory. False when it was not pinned.';
CREATE FUNCTION brain.unsupersede(id bigint, source text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/007-revise.sql
$$;
COMMENT ON FUNCTION brain.unsupersede(id bigint, source text) IS 'Reverts a supersede: the old memory is active again (a deprecated rule gets its severity back), the marks of the memories that state its old value go (brain.stale), and the memory created by that supersede is tombstoned. Refused when the successor has itself been superseded.';
CREATE FUNCTION brain.update_active_task(session bigint, task text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/014-sessions.sql
$$;
COMMENT ON FUNCTION brain.update_active_task(session bigint, task text, now timestamp with time zone) IS 'Sets what a session is working on (siblings see it) and refreshes its heartbeat.';
CREATE FUNCTION brain.update_task(id bigint, status text DEFAULT NULL::text, note text DEFAULT NULL::text, priority integer DEFAULT NULL::integer, due_at timestamp with time zone DEFAULT NULL::timestamp with time zone, source text DEFAULT NULL::text, now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/011-lifecycle.sql
$$;
COMMENT ON FUNCTION brain.update_task(id bigint, status text, note text, priority integer, due_at timestamp with time zone, source text, now timestamp with time zone) IS 'Moves a task along open <-> blocked -> done (any update reopens a stale task), and sets its note, priority or due date. Audited.';
CREATE FUNCTION brain.use_embedding_space(provider text, model text, dims integer, near_identical double precision DEFAULT NULL::double precision, related double precision DEFAULT NULL::double precision, max_tokens integer DEFAULT NULL::integer) RETURNS brain.embedding_space
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'public', 'pg_temp'
    AS $_$
    -- the body: sql/functions/003-embedding.sql
$_$;
COMMENT ON FUNCTION brain.use_embedding_space(provider text, model text, dims integer, near_identical double precision, related double precision, max_tokens integer) IS 'Registers an embedding space (provider, model, dims) with its HNSW indexes (all its vectors; its PATTERN rules'' for boot), or updates its dedup thresholds and max_tokens (the tokens of text its model embeds; known models get theirs). The first space of a workspace becomes active.';
CREATE FUNCTION brain.verify_token(token text) RETURNS TABLE(status text, token_id bigint, workspace_id bigint, role_name text, access text, name text, expires_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/025a-tenancy-catalogue.sql
$$;
COMMENT ON FUNCTION brain.verify_token(token text) IS 'Checks a bearer token of brain serve: status (valid, unknown, revoked, expired, no_access), its workspace, role and access (the lesser of the token''s and the role''s). Only a valid token carries an access.';
CREATE FUNCTION brain.word_count(t text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/001-text.sql
$$;
COMMENT ON FUNCTION brain.word_count(t text) IS 'Number of words separated by white space (no-break spaces included).';
CREATE FUNCTION brain.word_group(lexeme text, own jsonb DEFAULT '{}'::jsonb, builtin boolean DEFAULT true) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.word_group(lexeme text, own jsonb, builtin boolean) IS 'The lexemes a query lexeme matches (brain.word_groups for one).';
CREATE FUNCTION brain.word_groups(lexemes text[], own jsonb DEFAULT '{}'::jsonb, builtin boolean DEFAULT true) RETURNS TABLE(lexeme text, grp text[])
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/005a-search-words.sql
$$;
COMMENT ON FUNCTION brain.word_groups(lexemes text[], own jsonb, builtin boolean) IS 'The lexemes (and phrases, brain.search_term) each query lexeme or phrase matches: itself, the word it means and the words that mean the same, by the built-in dictionary (brain.builtin_search_words, unless builtin is false) and a workspace''s own (the setting search_words, own).';
CREATE FUNCTION brain.word_tsquery(grp text[], weights text DEFAULT ''::text) RETURNS tsquery
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    -- the body: sql/functions/005a-search-words.sql
$_$;
COMMENT ON FUNCTION brain.word_tsquery(grp text[], weights text) IS 'A query word as a tsquery: the lexemes of its group (brain.word_groups) OR-ed, each with the given weights (''AB'', ''C'', or none); a phrase of the group as the phrase of its lexemes.';
CREATE FUNCTION brain.wordpiece_tokens(t text) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010-observe.sql
$$;
COMMENT ON FUNCTION brain.wordpiece_tokens(t text) IS 'A conservative estimate of the tokens a BERT WordPiece tokenizer (all-MiniLM-L6-v2) makes of a text, special tokens left out: never below the true count on realistic text.';
CREATE FUNCTION brain.workspace_access(workspace_id bigint DEFAULT NULL::bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/migrations/013-tenancy.sql
$$;
COMMENT ON FUNCTION brain.workspace_access(workspace_id bigint) IS 'The access (read, write, admin) of the connected role in a workspace (default: the current one); NULL when it is not a member.';
CREATE FUNCTION brain.write_outcomes(memory_ids bigint[]) RETURNS TABLE(memory_id bigint, outcome text, current_id bigint, state text, provisional boolean)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- the body: sql/functions/010a-observe-batch.sql
$$;
COMMENT ON FUNCTION brain.write_outcomes(memory_ids bigint[]) IS 'The final outcome of memories a write reported: active (or another state), folded (tombstoned into current_id, the memory that holds its item now: brain.recall(current_id) lists it under folds), forgotten, or unknown; provisional while their near-identical dedup is still owed (queued without an embedding, or waiting for brain.index_vectors).';
CREATE TABLE brain.account (
    account_id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE brain.account ALTER COLUMN account_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME brain.account_account_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.action_item (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    action_item_id bigint NOT NULL,
    text text NOT NULL,
    project text DEFAULT ''::text NOT NULL,
    for_source text,
    created_by bigint,
    created_at timestamp with time zone NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    acknowledged_by bigint,
    acknowledged_at timestamp with time zone,
    response text,
    response_note text,
    all_projects boolean DEFAULT false NOT NULL,
    CONSTRAINT action_item_check CHECK (((status = 'acknowledged'::text) = (response IS NOT NULL))),
    CONSTRAINT action_item_response_check CHECK ((response = ANY (ARRAY['will_execute'::text, 'already_done'::text, 'not_relevant'::text]))),
    CONSTRAINT action_item_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'acknowledged'::text])))
);
ALTER TABLE ONLY brain.action_item ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.action_item FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.action_item ALTER COLUMN action_item_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.action_item_action_item_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.annotation (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    annotation_id bigint NOT NULL,
    memory_id bigint NOT NULL,
    note text NOT NULL,
    source text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT annotation_note_check CHECK ((note !~ '^\s*$'::text))
);
ALTER TABLE ONLY brain.annotation ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.annotation FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.annotation ALTER COLUMN annotation_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.annotation_annotation_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.audit (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    audit_id bigint NOT NULL,
    memory_id bigint,
    action text NOT NULL,
    actor text NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    snapshot jsonb,
    db_role text,
    CONSTRAINT audit_action_check CHECK ((action = ANY (ARRAY['insert'::text, 'update'::text, 'dedup'::text, 'supersede'::text, 'unsupersede'::text, 'forget'::text, 'archive'::text, 'restore'::text, 'rate'::text, 'annotate'::text, 'pin'::text, 'unpin'::text, 'confirm'::text, 'prune'::text, 'pack'::text])))
);
ALTER TABLE ONLY brain.audit ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.audit FORCE ROW LEVEL SECURITY;
COMMENT ON COLUMN brain.audit.db_role IS 'The login role of the session that wrote the row (set by a trigger).';
ALTER TABLE brain.audit ALTER COLUMN audit_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.audit_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.boot_event (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    boot_id bigint NOT NULL,
    session_id bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    budget integer NOT NULL,
    tokens integer NOT NULL,
    sections jsonb NOT NULL,
    dropped jsonb NOT NULL
);
ALTER TABLE ONLY brain.boot_event ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.boot_event FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.boot_event ALTER COLUMN boot_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.boot_event_boot_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.embedding (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    space_id bigint NOT NULL,
    memory_id bigint NOT NULL,
    embedding public.vector NOT NULL,
    embedded_at timestamp with time zone DEFAULT now() NOT NULL,
    ingest_seq bigint DEFAULT 0 NOT NULL,
    pattern_rule boolean DEFAULT false NOT NULL,
    CONSTRAINT embedding_ingest_seq_check CHECK ((ingest_seq >= 0))
);
ALTER TABLE ONLY brain.embedding ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding FORCE ROW LEVEL SECURITY;
COMMENT ON COLUMN brain.embedding.ingest_seq IS '0: in the space''s HNSW index from the start. Otherwise the bulk write that stored it: in the index once the space''s indexed_through reaches it.';
COMMENT ON COLUMN brain.embedding.pattern_rule IS 'Its memory is an active, unflagged PATTERN rule without a skill trigger: a candidate of the boot payload''s PATTERN section, in the space''s index embedding_patterns_<space_id>. Kept by triggers on brain.memory, brain.rule and brain.embedding.';
CREATE TABLE brain.embedding_failure (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    space_id bigint NOT NULL,
    memory_id bigint NOT NULL,
    attempts integer NOT NULL,
    last_status integer,
    last_error text NOT NULL,
    first_failed_at timestamp with time zone DEFAULT now() NOT NULL,
    last_failed_at timestamp with time zone DEFAULT now() NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    parked_at timestamp with time zone,
    CONSTRAINT embedding_failure_attempts_check CHECK ((attempts > 0))
);
ALTER TABLE ONLY brain.embedding_failure ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding_failure ALTER COLUMN space_id SET STATISTICS 0;
ALTER TABLE ONLY brain.embedding_failure FORCE ROW LEVEL SECURITY;
CREATE SEQUENCE brain.embedding_ingest_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER TABLE brain.embedding_space ALTER COLUMN space_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.embedding_space_space_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.fact (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    halflife_days real DEFAULT 7 NOT NULL,
    CONSTRAINT fact_halflife_days_check CHECK ((halflife_days > (0)::double precision))
);
ALTER TABLE ONLY brain.fact ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.fact FORCE ROW LEVEL SECURITY;
CREATE TABLE brain.handoff (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    handoff_id bigint NOT NULL,
    source text NOT NULL,
    project text DEFAULT ''::text NOT NULL,
    session_id bigint,
    text text,
    snapshot jsonb,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT handoff_check CHECK (((text IS NOT NULL) OR (snapshot IS NOT NULL))),
    CONSTRAINT handoff_source_check CHECK ((source ~ '^\S+$'::text))
);
ALTER TABLE ONLY brain.handoff ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.handoff FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.handoff ALTER COLUMN handoff_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.handoff_handoff_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.incident (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    what_was_wrong text,
    what_is_correct text,
    error_message text,
    command_attempted text,
    related_files text[] DEFAULT '{}'::text[] NOT NULL,
    complexity text,
    CONSTRAINT incident_complexity_check CHECK ((complexity = ANY (ARRAY['simple'::text, 'medium'::text, 'complex'::text])))
);
ALTER TABLE ONLY brain.incident ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.incident FORCE ROW LEVEL SECURITY;
CREATE TABLE brain.injection (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    injection_id bigint NOT NULL,
    session_id bigint,
    trigger text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    items bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    tokens integer DEFAULT 0 NOT NULL,
    truncated boolean DEFAULT false NOT NULL,
    CONSTRAINT injection_tokens_check CHECK ((tokens >= 0)),
    CONSTRAINT injection_trigger_check CHECK ((trigger = ANY (ARRAY['boot'::text, 'search'::text, 'prompt'::text, 'pack'::text, 'trajectory'::text])))
);
ALTER TABLE ONLY brain.injection ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.injection FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.injection IS 'Every injection of memory into an agent''s context: session, trigger, the memory ids shown, estimated tokens, and whether the budget cut it.';
ALTER TABLE brain.injection ALTER COLUMN injection_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.injection_injection_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.injection_use (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    injection_id bigint NOT NULL,
    memory_id bigint NOT NULL,
    how text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT injection_use_how_check CHECK ((how = ANY (ARRAY['recall'::text, 'rate'::text, 'supersede'::text, 'cite'::text])))
);
ALTER TABLE ONLY brain.injection_use ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.injection_use FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.injection_use IS 'An injected memory the same session later recalled, rated, superseded or cited: the first use of each item of an injection.';
CREATE TABLE brain.lexeme_sample (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    docs bigint NOT NULL,
    sampled integer NOT NULL,
    least_share double precision NOT NULL,
    analyzed_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY brain.lexeme_sample ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.lexeme_sample FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.lexeme_sample IS 'When brain.analyze_lexemes last sampled a workspace, how many memories it read, and the share below which lexemes are not listed.';
CREATE TABLE brain.lexeme_stat (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    lexeme text NOT NULL,
    share double precision NOT NULL,
    CONSTRAINT lexeme_stat_share_check CHECK (((share > (0)::double precision) AND (share <= (1)::double precision)))
);
ALTER TABLE ONLY brain.lexeme_stat ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.lexeme_stat FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.lexeme_stat IS 'The most common lexemes of a workspace''s memories and the share of its memories holding each, from a sample (brain.analyze_lexemes).';
CREATE TABLE brain.lexical_corpus (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    slot integer NOT NULL,
    docs bigint DEFAULT 0 NOT NULL,
    lexemes bigint DEFAULT 0 NOT NULL
);
ALTER TABLE ONLY brain.lexical_corpus ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.lexical_corpus FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.lexical_corpus IS 'Memories and lexemes per workspace, for the lexical leg''s BM25 statistics (sum over slots).';
CREATE TABLE brain.maintenance_run (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    run_id bigint NOT NULL,
    ran_at timestamp with time zone NOT NULL,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    counts jsonb NOT NULL
);
ALTER TABLE ONLY brain.maintenance_run ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.maintenance_run FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.maintenance_run ALTER COLUMN run_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.maintenance_run_run_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.membership (
    workspace_id bigint NOT NULL,
    role_name text NOT NULL,
    access text NOT NULL,
    granted_at timestamp with time zone DEFAULT now() NOT NULL,
    granted_by text DEFAULT SESSION_USER NOT NULL,
    CONSTRAINT membership_access_check CHECK ((access = ANY (ARRAY['read'::text, 'write'::text, 'admin'::text]))),
    CONSTRAINT membership_role_name_check CHECK ((role_name ~ '^[a-z_][a-z0-9_]{0,62}$'::text))
);
ALTER TABLE ONLY brain.membership ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.membership FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.membership IS 'Who may use a workspace: a database role (and every role that is a member of it) with read, write or admin access.';
CREATE TABLE brain.memory_fold (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    fold_id bigint NOT NULL,
    memory_id bigint NOT NULL,
    folded_memory_id bigint,
    displaced boolean DEFAULT false NOT NULL,
    headline text NOT NULL,
    body text DEFAULT ''::text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    source_agent text,
    session_id bigint,
    source_system text,
    source_ref text,
    source_hash text,
    item_created_at timestamp with time zone NOT NULL,
    similarity real NOT NULL,
    folded_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE ONLY brain.memory_fold ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.memory_fold FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.memory_fold IS 'One row per near-identical fold: the item whose text is no longer the survivor''s (memory_id). displaced: the survivor''s own earlier text, replaced by a longer folded one; folded_memory_id: the memory the item was stored as, if it had one.';
ALTER TABLE brain.memory_fold ALTER COLUMN fold_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.memory_fold_fold_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE brain.memory ALTER COLUMN memory_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.memory_memory_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE VIEW brain.memory_tiers WITH (security_invoker='true') AS
 SELECT m.memory_id AS id,
    m.kind,
    m.project,
    m.headline,
    m.state,
    brain.memory_tier(m.state, m.kind, m.pinned, m.dormant_after, m.expires_at, GREATEST(m.created_at, m.last_accessed, m.last_confirmed_at)) AS tier,
        CASE
            WHEN (f.memory_id IS NOT NULL) THEN brain.decay_score(GREATEST(m.created_at, m.last_accessed, m.last_confirmed_at), (f.halflife_days)::double precision)
            ELSE NULL::double precision
        END AS decay
   FROM (brain.memory m
     LEFT JOIN brain.fact f ON (((f.workspace_id = m.workspace_id) AND (f.memory_id = m.memory_id))))
  WHERE (m.workspace_id = brain.current_workspace());
COMMENT ON VIEW brain.memory_tiers IS 'Each memory of this workspace with its tier (hot, warm, cold, archive) and a fact''s decay score.';
CREATE TABLE brain.migration (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);
COMMENT ON TABLE brain.migration IS 'functions cf9e6ff5a7c2b9c21c5014729aaad11c6f1a7a05538382df36c525c62e0731f0';
CREATE TABLE brain.organization (
    organization_id bigint NOT NULL,
    account_id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE brain.organization ALTER COLUMN organization_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME brain.organization_organization_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE brain.pack ALTER COLUMN pack_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.pack_pack_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.repository (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    identity text NOT NULL,
    project text NOT NULL,
    label text NOT NULL,
    claimed boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT repository_identity_check CHECK ((identity ~ '^(remote|root|path):\S'::text)),
    CONSTRAINT repository_project_check CHECK ((project <> ''::text))
);
ALTER TABLE ONLY brain.repository ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.repository FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.repository IS 'Which project each repository identity (remote:<normalized URL>, root:<root commit>, path:<host>:<folder>) is filed under; label is the folder name people read. claimed: the identity that took the project''s name (one a project).';
CREATE TABLE brain.request_answer (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    key_hash bytea NOT NULL,
    function_name text NOT NULL,
    request_hash bytea NOT NULL,
    answer jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT request_answer_key_hash_check CHECK ((length(key_hash) = 32)),
    CONSTRAINT request_answer_request_hash_check CHECK ((length(request_hash) = 32))
);
ALTER TABLE ONLY brain.request_answer ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.request_answer FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.request_answer IS 'The answer of each write sent with a request key: the key''s digest, the function, the digest of its arguments as sent, the answer it returned. The same key with the same arguments is answered with it; with others, refused (BR023). Forgotten by maintenance after request_key_hours.';
CREATE TABLE brain.rule (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    severity text NOT NULL,
    prior_severity text,
    CONSTRAINT rule_prior_severity_check CHECK ((prior_severity = ANY (ARRAY['BLOCKER'::text, 'PATTERN'::text]))),
    CONSTRAINT rule_severity_check CHECK ((severity = ANY (ARRAY['BLOCKER'::text, 'PATTERN'::text, 'DEPRECATED'::text])))
);
ALTER TABLE ONLY brain.rule ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.rule FORCE ROW LEVEL SECURITY;
CREATE TABLE brain.scratch (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    scope text NOT NULL,
    scope_key text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT scratch_scope_check CHECK ((scope = ANY (ARRAY['session'::text, 'project'::text])))
);
ALTER TABLE ONLY brain.scratch ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.scratch FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.session ALTER COLUMN session_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.session_session_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.setting (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    name text NOT NULL,
    value jsonb NOT NULL
);
ALTER TABLE ONLY brain.setting ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.setting FORCE ROW LEVEL SECURITY;
CREATE TABLE brain.stale_mark (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    changed_id bigint NOT NULL,
    change_id bigint NOT NULL,
    old_values text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT stale_mark_old_values_check CHECK ((cardinality(old_values) > 0))
);
ALTER TABLE ONLY brain.stale_mark ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.stale_mark FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.stale_mark IS 'A memory that states the old value of a superseded one: memory_id depends on changed_id (the superseded memory), which change_id replaced; old_values are the values it states. Written by a supersede, removed by its undo.';
CREATE TABLE brain.task (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    status text DEFAULT 'open'::text NOT NULL,
    priority smallint DEFAULT 3 NOT NULL,
    due_at timestamp with time zone,
    status_note text,
    status_changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT task_priority_check CHECK (((priority >= 1) AND (priority <= 5))),
    CONSTRAINT task_status_check CHECK ((status = ANY (ARRAY['open'::text, 'blocked'::text, 'done'::text, 'stale'::text])))
);
ALTER TABLE ONLY brain.task ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.task FORCE ROW LEVEL SECURITY;
CREATE TABLE brain.token (
    workspace_id bigint NOT NULL,
    token_id bigint NOT NULL,
    name text NOT NULL,
    role_name text NOT NULL,
    access text NOT NULL,
    token_hash text NOT NULL,
    prefix text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by text DEFAULT SESSION_USER NOT NULL,
    expires_at timestamp with time zone,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    revoked_by text,
    CONSTRAINT token_access_check CHECK ((access = ANY (ARRAY['read'::text, 'write'::text, 'admin'::text]))),
    CONSTRAINT token_name_check CHECK ((((length(name) >= 1) AND (length(name) <= 100)) AND (name !~ '[[:cntrl:]]'::text))),
    CONSTRAINT token_prefix_check CHECK ((prefix ~ '^pbt_[0-9a-f]{8}$'::text)),
    CONSTRAINT token_role_name_check CHECK ((role_name ~ '^[a-z_][a-z0-9_]{0,62}$'::text)),
    CONSTRAINT token_token_hash_check CHECK ((token_hash ~ '^[0-9a-f]{64}$'::text))
);
ALTER TABLE ONLY brain.token ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.token FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.token IS 'Bearer tokens of brain serve: the sha256 of each token (never the token), its role, workspace, access, expiry, last use and revocation.';
COMMENT ON COLUMN brain.token.prefix IS 'The first characters of the token, to recognise it in a list.';
ALTER TABLE brain.token ALTER COLUMN token_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.token_token_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.tool_event (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    event_id bigint NOT NULL,
    tool text NOT NULL,
    channel text NOT NULL,
    session_id bigint,
    started_at timestamp with time zone NOT NULL,
    latency_ms double precision NOT NULL,
    ok boolean NOT NULL,
    error_code text,
    error text,
    CONSTRAINT tool_event_channel_check CHECK ((channel = ANY (ARRAY['mcp'::text, 'cli'::text, 'sql'::text]))),
    CONSTRAINT tool_event_latency_ms_check CHECK ((latency_ms >= (0)::double precision))
);
ALTER TABLE ONLY brain.tool_event ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.tool_event FORCE ROW LEVEL SECURITY;
ALTER TABLE brain.tool_event ALTER COLUMN event_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME brain.tool_event_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
CREATE TABLE brain.trajectory (
    workspace_id bigint DEFAULT brain.current_workspace() NOT NULL,
    memory_id bigint NOT NULL,
    problem text DEFAULT ''::text NOT NULL,
    outcome text DEFAULT ''::text NOT NULL,
    steps jsonb DEFAULT '[]'::jsonb NOT NULL,
    times_recorded integer DEFAULT 1 NOT NULL,
    times_used integer DEFAULT 0 NOT NULL,
    last_used_at timestamp with time zone,
    CONSTRAINT trajectory_steps_check CHECK ((jsonb_typeof(steps) = 'array'::text)),
    CONSTRAINT trajectory_times_recorded_check CHECK ((times_recorded >= 1)),
    CONSTRAINT trajectory_times_used_check CHECK ((times_used >= 0))
);
ALTER TABLE ONLY brain.trajectory ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.trajectory FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.trajectory IS 'The kind table of trajectories: problem, outcome, ordered steps (action, tool, command, files, result, failed), how often recorded (near-duplicates fold and count) and used (recalled or injected).';
CREATE TABLE brain.workspace_channel (
    workspace_id bigint NOT NULL,
    channel text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT workspace_channel_channel_check CHECK ((channel ~ '^brain_sessions_[0-9a-f]{32}$'::text))
);
ALTER TABLE ONLY brain.workspace_channel ALTER COLUMN workspace_id SET STATISTICS 0;
ALTER TABLE ONLY brain.workspace_channel FORCE ROW LEVEL SECURITY;
COMMENT ON TABLE brain.workspace_channel IS 'Each workspace''s LISTEN/NOTIFY channel for session changes: a name no other workspace can guess.';
ALTER TABLE brain.workspace ALTER COLUMN workspace_id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME brain.workspace_workspace_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);
ALTER TABLE ONLY brain.account
    ADD CONSTRAINT account_name_key UNIQUE (name);
ALTER TABLE ONLY brain.account
    ADD CONSTRAINT account_pkey PRIMARY KEY (account_id);
ALTER TABLE ONLY brain.action_item
    ADD CONSTRAINT action_item_pkey PRIMARY KEY (workspace_id, action_item_id);
ALTER TABLE ONLY brain.annotation
    ADD CONSTRAINT annotation_pkey PRIMARY KEY (workspace_id, annotation_id);
ALTER TABLE ONLY brain.audit
    ADD CONSTRAINT audit_pkey PRIMARY KEY (workspace_id, audit_id);
ALTER TABLE ONLY brain.boot_event
    ADD CONSTRAINT boot_event_pkey PRIMARY KEY (workspace_id, boot_id);
ALTER TABLE ONLY brain.embedding_failure
    ADD CONSTRAINT embedding_failure_pkey PRIMARY KEY (workspace_id, space_id, memory_id);
ALTER TABLE ONLY brain.embedding
    ADD CONSTRAINT embedding_pkey PRIMARY KEY (workspace_id, space_id, memory_id);
ALTER TABLE ONLY brain.embedding_space
    ADD CONSTRAINT embedding_space_pkey PRIMARY KEY (workspace_id, space_id);
ALTER TABLE ONLY brain.embedding_space
    ADD CONSTRAINT embedding_space_workspace_id_provider_model_key UNIQUE (workspace_id, provider, model);
ALTER TABLE ONLY brain.fact
    ADD CONSTRAINT fact_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.handoff
    ADD CONSTRAINT handoff_pkey PRIMARY KEY (workspace_id, handoff_id);
ALTER TABLE ONLY brain.incident
    ADD CONSTRAINT incident_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.injection
    ADD CONSTRAINT injection_pkey PRIMARY KEY (workspace_id, injection_id);
ALTER TABLE ONLY brain.injection_use
    ADD CONSTRAINT injection_use_pkey PRIMARY KEY (workspace_id, injection_id, memory_id);
ALTER TABLE ONLY brain.lexeme_sample
    ADD CONSTRAINT lexeme_sample_pkey PRIMARY KEY (workspace_id);
ALTER TABLE ONLY brain.lexeme_stat
    ADD CONSTRAINT lexeme_stat_pkey PRIMARY KEY (workspace_id, lexeme);
ALTER TABLE ONLY brain.lexical_corpus
    ADD CONSTRAINT lexical_corpus_pkey PRIMARY KEY (workspace_id, slot);
ALTER TABLE ONLY brain.maintenance_run
    ADD CONSTRAINT maintenance_run_pkey PRIMARY KEY (workspace_id, run_id);
ALTER TABLE ONLY brain.membership
    ADD CONSTRAINT membership_pkey PRIMARY KEY (workspace_id, role_name);
ALTER TABLE ONLY brain.memory_fold
    ADD CONSTRAINT memory_fold_pkey PRIMARY KEY (workspace_id, fold_id);
ALTER TABLE ONLY brain.memory
    ADD CONSTRAINT memory_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.migration
    ADD CONSTRAINT migration_pkey PRIMARY KEY (name);
ALTER TABLE ONLY brain.organization
    ADD CONSTRAINT organization_account_id_name_key UNIQUE (account_id, name);
ALTER TABLE ONLY brain.organization
    ADD CONSTRAINT organization_pkey PRIMARY KEY (organization_id);
ALTER TABLE ONLY brain.pack
    ADD CONSTRAINT pack_pkey PRIMARY KEY (workspace_id, pack_id);
ALTER TABLE ONLY brain.repository
    ADD CONSTRAINT repository_pkey PRIMARY KEY (workspace_id, identity);
ALTER TABLE ONLY brain.request_answer
    ADD CONSTRAINT request_answer_pkey PRIMARY KEY (workspace_id, key_hash);
ALTER TABLE ONLY brain.rule
    ADD CONSTRAINT rule_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.scratch
    ADD CONSTRAINT scratch_pkey PRIMARY KEY (workspace_id, scope, scope_key, key);
ALTER TABLE ONLY brain.session
    ADD CONSTRAINT session_pkey PRIMARY KEY (workspace_id, session_id);
ALTER TABLE ONLY brain.setting
    ADD CONSTRAINT setting_pkey PRIMARY KEY (workspace_id, name);
ALTER TABLE ONLY brain.stale_mark
    ADD CONSTRAINT stale_mark_pkey PRIMARY KEY (workspace_id, memory_id, changed_id);
ALTER TABLE ONLY brain.task
    ADD CONSTRAINT task_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.token
    ADD CONSTRAINT token_pkey PRIMARY KEY (workspace_id, token_id);
ALTER TABLE ONLY brain.token
    ADD CONSTRAINT token_workspace_id_token_hash_key UNIQUE (workspace_id, token_hash);
ALTER TABLE ONLY brain.tool_event
    ADD CONSTRAINT tool_event_pkey PRIMARY KEY (workspace_id, event_id);
ALTER TABLE ONLY brain.trajectory
    ADD CONSTRAINT trajectory_pkey PRIMARY KEY (workspace_id, memory_id);
ALTER TABLE ONLY brain.workspace_channel
    ADD CONSTRAINT workspace_channel_pkey PRIMARY KEY (workspace_id);
ALTER TABLE ONLY brain.workspace_channel
    ADD CONSTRAINT workspace_channel_workspace_id_channel_key UNIQUE (workspace_id, channel);
ALTER TABLE ONLY brain.workspace
    ADD CONSTRAINT workspace_organization_id_name_key UNIQUE (organization_id, name);
ALTER TABLE ONLY brain.workspace
    ADD CONSTRAINT workspace_pkey PRIMARY KEY (workspace_id);
CREATE INDEX action_item_created_by ON brain.action_item USING btree (workspace_id, created_by, created_at);
CREATE INDEX action_item_pending ON brain.action_item USING btree (workspace_id, project) WHERE (status = 'pending'::text);
CREATE INDEX annotation_memory ON brain.annotation USING btree (workspace_id, memory_id);
CREATE INDEX audit_memory ON brain.audit USING btree (workspace_id, memory_id, at);
CREATE INDEX embedding_failure_memory ON brain.embedding_failure USING btree (workspace_id, memory_id);
CREATE INDEX embedding_memory ON brain.embedding USING btree (workspace_id, memory_id);
CREATE UNIQUE INDEX embedding_space_one_active ON brain.embedding_space USING btree (workspace_id) WHERE (state = 'active'::text);
CREATE INDEX embedding_unindexed ON brain.embedding USING btree (workspace_id, space_id, ingest_seq) WHERE (ingest_seq > 0);
CREATE INDEX handoff_latest ON brain.handoff USING btree (workspace_id, project, source, created_at DESC);
CREATE INDEX handoff_project_snapshot ON brain.handoff USING btree (workspace_id, project, created_at DESC) WHERE (snapshot IS NOT NULL);
CREATE INDEX injection_at ON brain.injection USING btree (workspace_id, at DESC);
CREATE INDEX injection_session ON brain.injection USING btree (workspace_id, session_id, at) WHERE (session_id IS NOT NULL);
CREATE INDEX maintenance_run_latest ON brain.maintenance_run USING btree (workspace_id, ran_at DESC);
CREATE INDEX membership_role ON brain.membership USING btree (role_name);
CREATE INDEX memory_active ON brain.memory USING btree (workspace_id, kind, project) WHERE (state = 'active'::text);
CREATE INDEX memory_archived_at ON brain.memory USING btree (workspace_id, archived_at) WHERE (state = 'archived'::text);
CREATE INDEX memory_boot_pinned ON brain.memory USING btree (workspace_id, project, ((upvotes - downvotes)) DESC, importance DESC, created_at DESC, memory_id DESC) WHERE (pinned AND (state = 'active'::text) AND (skill_trigger IS NULL));
CREATE INDEX memory_created_at ON brain.memory USING btree (workspace_id, created_at DESC);
CREATE INDEX memory_dedup_pending ON brain.memory USING btree (workspace_id, memory_id) WHERE dedup_pending;
CREATE UNIQUE INDEX memory_exact_dedup ON brain.memory USING btree (workspace_id, kind, project, normalized_hash) WHERE (state = 'active'::text);
CREATE INDEX memory_flagged ON brain.memory USING btree (workspace_id, memory_id) WHERE ((flag_reasons <> '{}'::text[]) AND (flag_confirmed_at IS NULL));
CREATE INDEX memory_fold_folded ON brain.memory_fold USING btree (workspace_id, folded_memory_id) WHERE (folded_memory_id IS NOT NULL);
CREATE INDEX memory_fold_memory ON brain.memory_fold USING btree (workspace_id, memory_id);
CREATE INDEX memory_forgotten_at ON brain.memory USING btree (workspace_id, forgotten_at) WHERE (state = 'tombstoned'::text);
CREATE INDEX memory_headline_trgm ON brain.memory USING gin (headline public.gin_trgm_ops);
CREATE INDEX memory_last_accessed ON brain.memory USING btree (workspace_id, last_accessed);
CREATE INDEX memory_people ON brain.memory USING gin (people);
CREATE INDEX memory_replaced_by ON brain.memory USING btree (workspace_id, replaced_by) WHERE (replaced_by IS NOT NULL);
CREATE INDEX memory_rule_boot_blockers ON brain.memory USING btree (workspace_id, project, pinned DESC, ((upvotes - downvotes)) DESC, importance DESC, created_at DESC, memory_id DESC) WHERE ((kind = 'rule'::text) AND (state = 'active'::text) AND (skill_trigger IS NULL));
CREATE INDEX memory_rule_boot_patterns ON brain.memory USING btree (workspace_id, project, ((upvotes - downvotes)) DESC, created_at DESC, memory_id DESC) WHERE ((kind = 'rule'::text) AND (state = 'active'::text) AND (skill_trigger IS NULL));
CREATE INDEX memory_skill_name ON brain.memory USING btree (workspace_id, ((skill_trigger ->> 'name'::text))) WHERE ((skill_trigger IS NOT NULL) AND (state = 'active'::text));
CREATE INDEX memory_skill_trigger ON brain.memory USING gin (skill_trigger) WHERE (skill_trigger IS NOT NULL);
CREATE INDEX memory_source ON brain.memory USING btree (workspace_id, source_system, source_ref) WHERE (source_ref IS NOT NULL);
CREATE UNIQUE INDEX memory_source_chunk ON brain.memory USING btree (workspace_id, source_system, project, source_ref, source_chunk) WHERE ((state = 'active'::text) AND (source_chunk IS NOT NULL));
CREATE INDEX memory_source_hash ON brain.memory USING btree (workspace_id, source_system, project, source_hash) WHERE ((state = 'active'::text) AND (source_chunk IS NOT NULL));
CREATE INDEX memory_source_ref_prefix ON brain.memory USING btree (workspace_id, source_ref text_pattern_ops) WHERE (source_ref IS NOT NULL);
CREATE INDEX memory_superseded_by ON brain.memory USING btree (workspace_id, superseded_by) WHERE (superseded_by IS NOT NULL);
CREATE INDEX memory_supersedes ON brain.memory USING btree (workspace_id, supersedes) WHERE (supersedes IS NOT NULL);
CREATE INDEX memory_tags ON brain.memory USING gin (tags);
CREATE INDEX memory_thread ON brain.memory USING btree (workspace_id, thread, "position") WHERE (thread IS NOT NULL);
CREATE INDEX memory_tsv ON brain.memory USING gin (tsv) WITH (gin_pending_list_limit='256');
CREATE INDEX pack_members ON brain.pack USING gin (memory_ids) WHERE (state = 'active'::text);
CREATE UNIQUE INDEX pack_name ON brain.pack USING btree (workspace_id, name) WHERE (state = 'active'::text);
CREATE UNIQUE INDEX repository_claim ON brain.repository USING btree (workspace_id, project) WHERE claimed;
CREATE INDEX repository_project ON brain.repository USING btree (workspace_id, project);
CREATE INDEX request_answer_created ON brain.request_answer USING btree (workspace_id, created_at);
CREATE INDEX session_client_session ON brain.session USING btree (workspace_id, ((client_info ->> 'client_session'::text)), started_at DESC);
CREATE INDEX session_handoff ON brain.session USING btree (workspace_id, project, source, ended_at DESC) WHERE ((status = 'ended'::text) AND (handoff IS NOT NULL));
CREATE INDEX session_live ON brain.session USING btree (workspace_id, heartbeat_at) WHERE (status = 'active'::text);
CREATE INDEX session_process ON brain.session USING btree (workspace_id, host, pid) WHERE (status = 'active'::text);
CREATE INDEX session_project ON brain.session USING btree (workspace_id, project, status);
CREATE INDEX session_project_snapshot ON brain.session USING btree (workspace_id, project, ended_at DESC) WHERE (snapshot IS NOT NULL);
CREATE INDEX session_project_started ON brain.session USING btree (workspace_id, project, started_at DESC);
CREATE INDEX session_seat ON brain.session USING btree (workspace_id, source, project, cwd, started_at DESC);
CREATE INDEX stale_mark_change ON brain.stale_mark USING btree (workspace_id, change_id);
CREATE INDEX stale_mark_changed ON brain.stale_mark USING btree (workspace_id, changed_id);
CREATE INDEX task_open_order ON brain.task USING btree (workspace_id, priority, due_at, memory_id) WHERE (status = ANY (ARRAY['open'::text, 'blocked'::text]));
CREATE INDEX token_by_hash ON brain.token USING btree (token_hash);
CREATE UNIQUE INDEX token_live_name ON brain.token USING btree (workspace_id, name) WHERE (revoked_at IS NULL);
CREATE INDEX tool_event_errors ON brain.tool_event USING btree (workspace_id, started_at DESC) WHERE (NOT ok);
CREATE INDEX tool_event_recent ON brain.tool_event USING btree (workspace_id, started_at DESC);
CREATE TRIGGER action_item_notify AFTER INSERT OR UPDATE OF status ON brain.action_item FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
CREATE TRIGGER action_item_sizes BEFORE INSERT OR UPDATE ON brain.action_item FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('text', '2000', 'project', '200', 'for_source', '200', 'response_note', '2000');
CREATE TRIGGER annotation_sizes BEFORE INSERT OR UPDATE ON brain.annotation FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('note', '10000', 'source', '200');
CREATE TRIGGER audit_guard BEFORE INSERT OR DELETE OR UPDATE ON brain.audit FOR EACH ROW EXECUTE FUNCTION brain._audit_guard();
CREATE CONSTRAINT TRIGGER embedding_commit_check AFTER INSERT ON brain.embedding DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((NULLIF(current_setting('brain.commit_checks'::text, true), ''::text))::jsonb ? (new.memory_id)::text)) EXECUTE FUNCTION brain._commit_check();
CREATE TRIGGER embedding_pattern_rule BEFORE INSERT ON brain.embedding FOR EACH ROW EXECUTE FUNCTION brain._embedding_pattern_rule();
CREATE TRIGGER handoff_notify AFTER INSERT ON brain.handoff FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
CREATE TRIGGER memory_corpus_delete AFTER DELETE ON brain.memory REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();
CREATE TRIGGER memory_corpus_insert AFTER INSERT ON brain.memory REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();
CREATE TRIGGER memory_follows_lifecycle BEFORE UPDATE OF state ON brain.memory FOR EACH ROW WHEN ((old.state IS DISTINCT FROM new.state)) EXECUTE FUNCTION brain._follows_lifecycle('memory', 'state');
CREATE TRIGGER memory_pack_follow AFTER UPDATE OF state ON brain.memory FOR EACH ROW WHEN (((old.state = 'active'::text) AND (new.state <> 'active'::text))) EXECUTE FUNCTION brain._pack_follow();
CREATE TRIGGER memory_pattern_rule AFTER UPDATE OF kind, state, skill_trigger, flag_reasons, flag_confirmed_at ON brain.memory FOR EACH ROW WHEN ((brain._may_be_pattern_rule(old.kind, old.state, old.skill_trigger, old.flag_reasons, old.flag_confirmed_at) IS DISTINCT FROM brain._may_be_pattern_rule(new.kind, new.state, new.skill_trigger, new.flag_reasons, new.flag_confirmed_at))) EXECUTE FUNCTION brain._sync_pattern_rule();
CREATE TRIGGER memory_sizes BEFORE INSERT OR UPDATE OF project, source_agent, source_system, source_ref, source_hash, supersede_reason, forget_reason ON brain.memory FOR EACH ROW EXECUTE FUNCTION brain._check_memory_sizes();
CREATE TRIGGER memory_tsv BEFORE INSERT OR UPDATE OF headline, body, context ON brain.memory FOR EACH ROW EXECUTE FUNCTION brain._memory_tsv();
CREATE TRIGGER rule_pattern_rule_insert AFTER INSERT ON brain.rule FOR EACH ROW WHEN ((new.severity = 'PATTERN'::text)) EXECUTE FUNCTION brain._sync_pattern_rule();
CREATE TRIGGER rule_pattern_rule_update AFTER UPDATE OF severity ON brain.rule FOR EACH ROW WHEN ((old.severity IS DISTINCT FROM new.severity)) EXECUTE FUNCTION brain._sync_pattern_rule();
CREATE TRIGGER rule_severity_follows_supersede BEFORE UPDATE OF severity ON brain.rule FOR EACH ROW WHEN ((new.severity IS DISTINCT FROM old.severity)) EXECUTE FUNCTION brain._rule_severity_follows_supersede();
CREATE TRIGGER rule_text_is_immutable BEFORE UPDATE OF headline, body, normalized, kind ON brain.memory FOR EACH ROW WHEN (((old.kind = 'rule'::text) AND ((new.headline IS DISTINCT FROM old.headline) OR (new.body IS DISTINCT FROM old.body) OR (new.kind IS DISTINCT FROM old.kind)))) EXECUTE FUNCTION brain._rule_is_immutable();
CREATE TRIGGER scratch_sizes BEFORE INSERT OR UPDATE ON brain.scratch FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('key', '200', 'scope_key', '200', 'value', '100000');
CREATE TRIGGER session_change_notify AFTER UPDATE ON brain.session FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) OR (old.current_task IS DISTINCT FROM new.current_task) OR (old.handoff IS DISTINCT FROM new.handoff))) EXECUTE FUNCTION brain._notify_sessions();
CREATE TRIGGER session_notify AFTER INSERT ON brain.session FOR EACH ROW EXECUTE FUNCTION brain._notify_sessions();
CREATE TRIGGER session_sizes BEFORE INSERT OR UPDATE ON brain.session FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('source', '200', 'project', '200', 'cwd', '4096', 'host', '255', 'current_task', '2000', 'end_reason', '2000', 'handoff', '100000');
CREATE TRIGGER setting_sizes BEFORE INSERT OR UPDATE ON brain.setting FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('value', '10000');
CREATE TRIGGER task_follows_lifecycle BEFORE UPDATE OF status ON brain.task FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION brain._follows_lifecycle('task', 'status');
CREATE TRIGGER tool_event_sizes BEFORE INSERT ON brain.tool_event FOR EACH ROW EXECUTE FUNCTION brain._check_sizes('tool', '200', 'error_code', '20');
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.action_item FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.annotation FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.boot_event FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.embedding FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.embedding_failure FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.fact FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.handoff FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.incident FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.injection FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.injection_use FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.maintenance_run FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.memory FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.memory_fold FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.pack FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.repository FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.request_answer FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.rule FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.scratch FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.session FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.stale_mark FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.task FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.tool_event FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
CREATE TRIGGER write_guard BEFORE INSERT OR DELETE OR UPDATE OR TRUNCATE ON brain.trajectory FOR EACH STATEMENT EXECUTE FUNCTION brain._write_guard();
ALTER TABLE ONLY brain.action_item
    ADD CONSTRAINT action_item_workspace_id_acknowledged_by_fkey FOREIGN KEY (workspace_id, acknowledged_by) REFERENCES brain.session(workspace_id, session_id);
ALTER TABLE ONLY brain.action_item
    ADD CONSTRAINT action_item_workspace_id_created_by_fkey FOREIGN KEY (workspace_id, created_by) REFERENCES brain.session(workspace_id, session_id);
ALTER TABLE ONLY brain.action_item
    ADD CONSTRAINT action_item_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.annotation
    ADD CONSTRAINT annotation_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.audit
    ADD CONSTRAINT audit_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.boot_event
    ADD CONSTRAINT boot_event_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.boot_event
    ADD CONSTRAINT boot_event_workspace_id_session_id_fkey FOREIGN KEY (workspace_id, session_id) REFERENCES brain.session(workspace_id, session_id);
ALTER TABLE ONLY brain.embedding_failure
    ADD CONSTRAINT embedding_failure_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.embedding_failure
    ADD CONSTRAINT embedding_failure_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.embedding_failure
    ADD CONSTRAINT embedding_failure_workspace_id_space_id_fkey FOREIGN KEY (workspace_id, space_id) REFERENCES brain.embedding_space(workspace_id, space_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.embedding_space
    ADD CONSTRAINT embedding_space_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.embedding
    ADD CONSTRAINT embedding_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.embedding
    ADD CONSTRAINT embedding_workspace_id_space_id_fkey FOREIGN KEY (workspace_id, space_id) REFERENCES brain.embedding_space(workspace_id, space_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.fact
    ADD CONSTRAINT fact_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.handoff
    ADD CONSTRAINT handoff_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.handoff
    ADD CONSTRAINT handoff_workspace_id_session_id_fkey FOREIGN KEY (workspace_id, session_id) REFERENCES brain.session(workspace_id, session_id);
ALTER TABLE ONLY brain.incident
    ADD CONSTRAINT incident_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.injection_use
    ADD CONSTRAINT injection_use_workspace_id_injection_id_fkey FOREIGN KEY (workspace_id, injection_id) REFERENCES brain.injection(workspace_id, injection_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.injection
    ADD CONSTRAINT injection_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.lexeme_sample
    ADD CONSTRAINT lexeme_sample_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.lexeme_stat
    ADD CONSTRAINT lexeme_stat_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.lexical_corpus
    ADD CONSTRAINT lexical_corpus_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.maintenance_run
    ADD CONSTRAINT maintenance_run_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.membership
    ADD CONSTRAINT membership_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.memory_fold
    ADD CONSTRAINT memory_fold_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.memory
    ADD CONSTRAINT memory_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.memory
    ADD CONSTRAINT memory_workspace_id_replaced_by_fkey FOREIGN KEY (workspace_id, replaced_by) REFERENCES brain.memory(workspace_id, memory_id);
ALTER TABLE ONLY brain.memory
    ADD CONSTRAINT memory_workspace_id_superseded_by_fkey FOREIGN KEY (workspace_id, superseded_by) REFERENCES brain.memory(workspace_id, memory_id);
ALTER TABLE ONLY brain.memory
    ADD CONSTRAINT memory_workspace_id_supersedes_fkey FOREIGN KEY (workspace_id, supersedes) REFERENCES brain.memory(workspace_id, memory_id);
ALTER TABLE ONLY brain.organization
    ADD CONSTRAINT organization_account_id_fkey FOREIGN KEY (account_id) REFERENCES brain.account(account_id);
ALTER TABLE ONLY brain.pack
    ADD CONSTRAINT pack_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.pack
    ADD CONSTRAINT pack_workspace_id_space_id_fkey FOREIGN KEY (workspace_id, space_id) REFERENCES brain.embedding_space(workspace_id, space_id) ON DELETE SET NULL (space_id);
ALTER TABLE ONLY brain.repository
    ADD CONSTRAINT repository_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.request_answer
    ADD CONSTRAINT request_answer_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.rule
    ADD CONSTRAINT rule_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.scratch
    ADD CONSTRAINT scratch_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.session
    ADD CONSTRAINT session_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.setting
    ADD CONSTRAINT setting_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.stale_mark
    ADD CONSTRAINT stale_mark_workspace_id_change_id_fkey FOREIGN KEY (workspace_id, change_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.stale_mark
    ADD CONSTRAINT stale_mark_workspace_id_changed_id_fkey FOREIGN KEY (workspace_id, changed_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.stale_mark
    ADD CONSTRAINT stale_mark_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.stale_mark
    ADD CONSTRAINT stale_mark_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.task
    ADD CONSTRAINT task_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.token
    ADD CONSTRAINT token_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.tool_event
    ADD CONSTRAINT tool_event_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id);
ALTER TABLE ONLY brain.trajectory
    ADD CONSTRAINT trajectory_workspace_id_memory_id_fkey FOREIGN KEY (workspace_id, memory_id) REFERENCES brain.memory(workspace_id, memory_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.workspace_channel
    ADD CONSTRAINT workspace_channel_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES brain.workspace(workspace_id) ON DELETE CASCADE;
ALTER TABLE ONLY brain.workspace
    ADD CONSTRAINT workspace_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES brain.organization(organization_id);
ALTER TABLE brain.action_item ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.annotation ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.boot_event ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.embedding ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.embedding_failure ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.embedding_space ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.fact ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.handoff ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.incident ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.injection ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.injection_use ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.lexeme_sample ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.lexeme_stat ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.lexical_corpus ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.maintenance_run ENABLE ROW LEVEL SECURITY;
CREATE POLICY members_see ON brain.workspace FOR SELECT USING ((brain.workspace_access(workspace_id) IS NOT NULL));
ALTER TABLE brain.membership ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.memory ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.memory_fold ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_memberships ON brain.membership FOR SELECT USING ((pg_has_role(SESSION_USER, (to_regrole(role_name))::oid, 'MEMBER'::text) OR pg_has_role(CURRENT_USER, (to_regrole(role_name))::oid, 'MEMBER'::text) OR pg_has_role(CURRENT_USER, ( SELECT n.nspowner
   FROM pg_namespace n
  WHERE (n.nspname = 'brain'::name)), 'MEMBER'::text)));
CREATE POLICY owner_only ON brain.token USING (pg_has_role(CURRENT_USER, ( SELECT n.nspowner
   FROM pg_namespace n
  WHERE (n.nspname = 'brain'::name)), 'MEMBER'::text));
CREATE POLICY owner_only ON brain.workspace_channel USING (pg_has_role(CURRENT_USER, ( SELECT n.nspowner
   FROM pg_namespace n
  WHERE (n.nspname = 'brain'::name)), 'MEMBER'::text));
ALTER TABLE brain.pack ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.repository ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.request_answer ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.rule ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.scratch ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.session ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.setting ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.stale_mark ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.task ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.token ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.tool_event ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.trajectory ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.workspace ENABLE ROW LEVEL SECURITY;
ALTER TABLE brain.workspace_channel ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_delete ON brain.action_item FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.annotation FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.audit FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.boot_event FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.embedding FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.embedding_failure FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.embedding_space FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.fact FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.handoff FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.incident FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.injection FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.injection_use FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.lexeme_sample FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.lexeme_stat FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.lexical_corpus FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.maintenance_run FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.memory FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.memory_fold FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.pack FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.repository FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.request_answer FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.rule FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.scratch FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.session FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.setting FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.stale_mark FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.task FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.tool_event FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_delete ON brain.trajectory FOR DELETE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.action_item FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.annotation FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.audit FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.boot_event FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.embedding FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.embedding_failure FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.embedding_space FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.fact FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.handoff FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.incident FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.injection FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.injection_use FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.lexeme_sample FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.lexeme_stat FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.lexical_corpus FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.maintenance_run FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.memory FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.memory_fold FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.pack FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.repository FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.request_answer FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.rule FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.scratch FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.session FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.setting FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.stale_mark FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.task FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.tool_event FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_insert ON brain.trajectory FOR INSERT WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.action_item FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.annotation FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.audit FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.boot_event FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.embedding FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.embedding_failure FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.embedding_space FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.fact FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.handoff FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.incident FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.injection FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.injection_use FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.lexeme_sample FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.lexeme_stat FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.lexical_corpus FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.maintenance_run FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.memory FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.memory_fold FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.pack FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.repository FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.request_answer FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.rule FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.scratch FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.session FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.setting FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.stale_mark FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.task FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.tool_event FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_isolation ON brain.trajectory FOR SELECT USING ((workspace_id = ( SELECT brain.current_workspace() AS current_workspace)));
CREATE POLICY workspace_update ON brain.action_item FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.annotation FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.audit FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.boot_event FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.embedding FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.embedding_failure FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.embedding_space FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.fact FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.handoff FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.incident FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.injection FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.injection_use FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.lexeme_sample FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.lexeme_stat FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.lexical_corpus FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.maintenance_run FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.memory FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.memory_fold FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.pack FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.repository FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.request_answer FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.rule FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.scratch FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.session FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.setting FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.stale_mark FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.task FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.tool_event FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('read'::text) AS current_workspace)));
CREATE POLICY workspace_update ON brain.trajectory FOR UPDATE USING ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace))) WITH CHECK ((workspace_id = ( SELECT brain.current_workspace('write'::text) AS current_workspace)));
