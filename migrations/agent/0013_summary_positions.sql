-- Issue 12 §8 (session 10): the hot page resolves a stored '' link by asking which summary messages lie between its
-- rows (rows/hot-page.ts). Through `messages_thread_seq` that read visits every message of the page's span to test its
-- kind; this partial index holds only summary messages (thread, seq, id: all the read needs), so it seeks to them
-- alone. Raw message inserts skip it (the WHERE is false for them); existing summary messages are indexed here.
CREATE INDEX `messages_summary_seq` ON `messages` (`thread_id`, `seq`, `id`) WHERE `kind` = 'summary';
