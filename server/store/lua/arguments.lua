-- Every script's arguments: one MessagePack map in ARGV[1] with named fields (KEYS stay keys, for the Cluster's
-- slots). server/store/scripts.py puts this function and the line
--   local ARGS = read_arguments(ARGV[1], {<every field the script reads as ARGS.name>})
-- before each script, so a field the caller did not send stops the script before it writes anything, never a
-- silent nil. An optional value is sent as false (a MessagePack nil would vanish from the Lua table).
local function read_arguments(packed, names)
  local fields = cmsgpack.unpack(packed)
  for _, name in ipairs(names) do
    if fields[name] == nil then error('script argument missing: ' .. name) end
  end
  return fields
end
