-- Clicks under their campaign, with an interleaved index by time within a campaign.
CREATE TABLE Campaigns (
  CampaignId STRING(36) NOT NULL,
  Name STRING(256),
) PRIMARY KEY (CampaignId);

CREATE TABLE Clicks (
  CampaignId STRING(36) NOT NULL,
  ClickId STRING(36) NOT NULL,
  ClickedAt TIMESTAMP NOT NULL,
  Cost NUMERIC,
) PRIMARY KEY (CampaignId, ClickId),
  INTERLEAVE IN PARENT Campaigns ON DELETE CASCADE;

CREATE INDEX ClicksByCampaignTime ON Clicks(CampaignId, ClickedAt DESC), INTERLEAVE IN Campaigns;
