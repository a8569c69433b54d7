-- Offers "sync-now" on every ServiceWatch, except a suspended one, which
-- makes no calls to the cloud.
local actions = {}
actions["sync-now"] = {["disabled"] = obj.spec.suspend == true}
return actions
