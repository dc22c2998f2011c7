"""What the graph-break rules share: whether a construct runs where Dynamo traces it
and the finding's text (`common`), Dynamo's official graph-break IDs per torch release
(`ids`), and calls Dynamo does not trace (`untraceable_calls`)."""
