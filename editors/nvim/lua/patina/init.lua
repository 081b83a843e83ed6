-- Patina for Neovim (0.7+): starts `patina-lsp` with the built-in LSP client for the files of
-- the workspace (definitions, references, hover and workspace symbols then work through the
-- usual vim.lsp.buf functions) and adds
--   :Patina {query}      hybrid search into the quickfix list (path:line jumps)
--   :PatinaContext {q}   the relevant code for a query, rendered into a scratch buffer
--   :PatinaRelated       files that change together with the current one (quickfix list)
local M = {}

local config = {
  cmd = { 'patina-lsp' },
  -- The workspace folder: the git repository of the current directory, else the directory.
  root_dir = nil,
  -- Register the workspace folder with the daemon when it is a git repository.
  register = true,
  -- Hits listed by :Patina.
  limit = 30,
  -- Milliseconds :Patina and friends wait for an answer.
  timeout = 30000,
}

local client_id = nil

local function root_dir()
  if config.root_dir then
    return config.root_dir
  end
  local out = vim.fn.systemlist({ 'git', 'rev-parse', '--show-toplevel' })
  if vim.v.shell_error == 0 and out[1] and out[1] ~= '' then
    return out[1]
  end
  return vim.fn.getcwd()
end

--- The running client, started (and initialized) when needed.
function M.client()
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if not client or client.is_stopped() then
    client_id = vim.lsp.start_client({
      name = 'patina',
      cmd = config.cmd,
      root_dir = root_dir(),
      init_options = { register = config.register },
    })
    if not client_id then
      vim.notify('Patina: cannot start ' .. table.concat(config.cmd, ' '), vim.log.levels.ERROR)
      return nil
    end
    client = vim.lsp.get_client_by_id(client_id)
  end
  if not vim.wait(config.timeout, function() return client.initialized end, 10) then
    vim.notify('Patina: the language server did not initialize', vim.log.levels.ERROR)
    return nil
  end
  return client
end

--- Attach the client to a buffer holding a file under the workspace folder.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return
  end
  local root = root_dir()
  if name:sub(1, #root + 1) ~= root .. '/' then
    return
  end
  local client = M.client()
  if client then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

local function request(method, params)
  local client = M.client()
  if not client then
    return nil
  end
  local res, err = client.request_sync(method, params, config.timeout, 0)
  if not res then
    vim.notify('Patina: ' .. tostring(err), vim.log.levels.ERROR)
    return nil
  end
  if res.err then
    vim.notify('Patina: ' .. (res.err.message or vim.inspect(res.err)), vim.log.levels.ERROR)
    return nil
  end
  return res.result
end

--- Quickfix items of `patina/search` hits (the line naming each hit's symbol).
function M.items(hits)
  local items = {}
  for _, h in ipairs(hits or {}) do
    if type(h.uri) == 'string' then
      local first = (h.snippet or ''):match('[^\n]*') or ''
      local oracles = {}
      for _, p in ipairs(h.provenance or {}) do
        table.insert(oracles, p.oracle)
      end
      table.insert(items, {
        filename = vim.uri_to_fname(h.uri),
        lnum = h.range.start.line + 1,
        col = 1,
        text = string.format('%s %s [%s] %s', h.kind, h.name, table.concat(oracles, ','), vim.trim(first)),
      })
    end
  end
  return items
end

--- :Patina {query}
function M.search(query, open)
  if query == nil or vim.trim(query) == '' then
    vim.notify('Patina: give a query, e.g. :Patina parse config file', vim.log.levels.WARN)
    return
  end
  local result = request('patina/search', { query = query, limit = config.limit, snippetLines = 1 })
  if not result then
    return
  end
  vim.fn.setqflist({}, ' ', { title = 'Patina: ' .. query, items = M.items(result.hits) })
  for _, n in ipairs(result.notices or {}) do
    vim.notify('Patina: ' .. n, vim.log.levels.INFO)
  end
  if open ~= false then
    vim.cmd('copen')
  end
end

--- :PatinaContext {query}
function M.context(query)
  if query == nil or vim.trim(query) == '' then
    vim.notify('Patina: give a query, e.g. :PatinaContext how is the config parsed', vim.log.levels.WARN)
    return
  end
  local result = request('workspace/executeCommand', { command = 'patina.context', arguments = { query } })
  if not result then
    return
  end
  vim.cmd('new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'markdown'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.text, '\n', { plain = true }))
end

--- :PatinaRelated
function M.related()
  local name = vim.api.nvim_buf_get_name(0)
  if name == '' then
    vim.notify('Patina: the current buffer has no file', vim.log.levels.WARN)
    return
  end
  local result = request('workspace/executeCommand', { command = 'patina.related', arguments = { vim.uri_from_fname(name) } })
  if not result then
    return
  end
  local items = {}
  for _, f in ipairs(result.files or {}) do
    table.insert(items, {
      filename = vim.uri_to_fname(f.uri),
      lnum = 1,
      text = string.format('changed together in %d commits (%d%%)', f.support, math.floor(f.confidence * 100 + 0.5)),
    })
  end
  vim.fn.setqflist({}, ' ', { title = 'Patina: related to ' .. result.path, items = items })
  vim.cmd('copen')
end

function M.setup(opts)
  config = vim.tbl_extend('force', config, opts or {})
  vim.api.nvim_create_user_command('Patina', function(a) M.search(a.args) end, { nargs = '+', desc = 'Patina search into the quickfix list' })
  vim.api.nvim_create_user_command('PatinaContext', function(a) M.context(a.args) end, { nargs = '+', desc = 'Patina context for a query' })
  vim.api.nvim_create_user_command('PatinaRelated', function() M.related() end, { nargs = 0, desc = 'Files that change with this one' })
  local group = vim.api.nvim_create_augroup('patina', { clear = true })
  vim.api.nvim_create_autocmd('BufReadPost', {
    group = group,
    callback = function(ev) M.attach(ev.buf) end,
  })
end

return M
