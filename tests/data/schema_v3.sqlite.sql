-- searchapp database schema version 3 (SQLite), as created by the ORM of version 3
-- (commit ab5e895): one FTS5 table over every corpus, kept by three triggers.
CREATE TABLE schema_info (
	id INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE models (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	dimension INTEGER NOT NULL, 
	path TEXT, 
	base_model VARCHAR(200), 
	info JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
CREATE TABLE corpora (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	name VARCHAR(200) NOT NULL, 
	model_name VARCHAR(200) NOT NULL, 
	generation INTEGER NOT NULL, 
	document_count INTEGER NOT NULL, 
	meta_columns JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	UNIQUE (name)
);
CREATE TABLE jobs (
	id INTEGER NOT NULL, 
	kind VARCHAR(50) NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	payload JSON NOT NULL, 
	result JSON, 
	progress_done INTEGER NOT NULL, 
	progress_total INTEGER NOT NULL, 
	message TEXT, 
	error TEXT, 
	cancel_requested BOOLEAN NOT NULL, 
	worker VARCHAR(200), 
	attempts INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	started_at DATETIME, 
	finished_at DATETIME, 
	heartbeat_at DATETIME, 
	PRIMARY KEY (id)
);
CREATE INDEX ix_jobs_status ON jobs (status);
CREATE TABLE documents (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	corpus_id INTEGER NOT NULL, 
	external_id VARCHAR(500) NOT NULL, 
	text TEXT NOT NULL, 
	meta JSON NOT NULL, 
	content_hash VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT uq_document_external UNIQUE (corpus_id, external_id), 
	FOREIGN KEY(corpus_id) REFERENCES corpora (id) ON DELETE CASCADE
);
CREATE INDEX ix_documents_corpus_id_id ON documents (corpus_id, id);
CREATE VIRTUAL TABLE documents_fts USING fts5(
        text, content='documents', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts (rowid, text) VALUES (new.id, new.text);
    END;
CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
CREATE TRIGGER documents_fts_update AFTER UPDATE OF text ON documents BEGIN
        INSERT INTO documents_fts (documents_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO documents_fts (rowid, text) VALUES (new.id, new.text);
    END;
CREATE TABLE embedded_counts (
	corpus_id INTEGER NOT NULL, 
	model_id INTEGER NOT NULL, 
	count INTEGER NOT NULL, 
	PRIMARY KEY (corpus_id, model_id), 
	FOREIGN KEY(corpus_id) REFERENCES corpora (id) ON DELETE CASCADE, 
	FOREIGN KEY(model_id) REFERENCES models (id) ON DELETE CASCADE
);
CREATE TABLE document_tombstones (
	id INTEGER NOT NULL, 
	corpus_id INTEGER NOT NULL, 
	document_id INTEGER NOT NULL, 
	generation INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(corpus_id) REFERENCES corpora (id) ON DELETE CASCADE
);
CREATE INDEX ix_tombstones_changes ON document_tombstones (corpus_id, generation);
CREATE TABLE analyses (
	id INTEGER NOT NULL, 
	corpus_id INTEGER NOT NULL, 
	model_id INTEGER NOT NULL, 
	kind VARCHAR(50) NOT NULL, 
	params_key VARCHAR(500) NOT NULL, 
	params JSON NOT NULL, 
	generation INTEGER NOT NULL, 
	result JSON NOT NULL, 
	arrays BLOB, 
	seconds FLOAT, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_analysis UNIQUE (corpus_id, model_id, kind, params_key), 
	FOREIGN KEY(corpus_id) REFERENCES corpora (id) ON DELETE CASCADE, 
	FOREIGN KEY(model_id) REFERENCES models (id) ON DELETE CASCADE
);
CREATE INDEX ix_analyses_corpus_id ON analyses (corpus_id);
CREATE TABLE embeddings (
	document_id INTEGER NOT NULL, 
	model_id INTEGER NOT NULL, 
	corpus_id INTEGER NOT NULL, 
	generation INTEGER NOT NULL, 
	vector BLOB NOT NULL, 
	passages BLOB, 
	passage_spans BLOB, 
	PRIMARY KEY (document_id, model_id), 
	FOREIGN KEY(document_id) REFERENCES documents (id) ON DELETE CASCADE, 
	FOREIGN KEY(model_id) REFERENCES models (id) ON DELETE CASCADE, 
	FOREIGN KEY(corpus_id) REFERENCES corpora (id) ON DELETE CASCADE
);
CREATE INDEX ix_embeddings_changes ON embeddings (corpus_id, model_id, generation);
