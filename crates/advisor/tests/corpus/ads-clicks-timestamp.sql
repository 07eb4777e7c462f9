-- Ad clicks keyed by click time.
-- expect: monotonic-key Clicks
CREATE TABLE Clicks (
  ClickedAt TIMESTAMP NOT NULL,
  ClickId STRING(36) NOT NULL,
  CampaignId STRING(36) NOT NULL,
  Cost NUMERIC,
) PRIMARY KEY (ClickedAt, ClickId);
