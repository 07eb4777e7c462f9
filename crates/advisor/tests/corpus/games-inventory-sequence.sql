-- Item instances numbered by a bit-reversed sequence, under the player.
CREATE SEQUENCE ItemSeq BIT_REVERSED_POSITIVE;

CREATE TABLE Players (
  PlayerId STRING(36) NOT NULL,
  Name STRING(64),
) PRIMARY KEY (PlayerId);

CREATE TABLE Inventory (
  PlayerId STRING(36) NOT NULL,
  ItemId INT64 NOT NULL DEFAULT (GET_NEXT_SEQUENCE_VALUE(SEQUENCE ItemSeq)),
  Kind STRING(32),
) PRIMARY KEY (PlayerId, ItemId),
  INTERLEAVE IN PARENT Players ON DELETE CASCADE;
