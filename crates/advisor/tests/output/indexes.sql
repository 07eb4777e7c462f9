CREATE INDEX UsersByLastSeen ON Users(LastSeenAt);

-- rowtree:allow(monotonic-index)
CREATE INDEX EventsByTime ON Events(EventTime);
