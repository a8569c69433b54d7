-- Health of a cloud.servicewatch.io/ServiceWatch, from the conditions the
-- operator writes (kstatus style). Argo CD runs this with the object as obj.
local hs = {}
local generation = obj.metadata.generation
if obj.status == nil or obj.status.observedGeneration == nil
    or (generation ~= nil and obj.status.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to sync the latest generation"
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local function describe(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
-- A sync under way, then a failure only a person can fix, before Ready.
for _, rule in ipairs({{"Reconciling", "Progressing"}, {"Stalled", "Degraded"}}) do
  local c = conditions[rule[1]]
  if c ~= nil and c.status == "True" then
    hs.status = rule[2]
    hs.message = describe(c)
    return hs
  end
end
local ready = conditions["Ready"]
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end
if ready ~= nil and ready.status == "False" then
  if ready.reason == "Suspended" then
    hs.status = "Suspended"
  else
    hs.status = "Degraded"
  end
  hs.message = describe(ready)
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs
