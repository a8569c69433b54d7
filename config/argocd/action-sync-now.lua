-- Asks the operator to sync now: any new value of the annotation does; the
-- operator echoes it in status.lastHandledRequestedAt once acted on.
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["servicewatch.io/requested-at"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
