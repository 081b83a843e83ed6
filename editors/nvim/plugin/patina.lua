-- Loaded by plugin managers; nothing happens until require('patina').setup() is called.
if vim.fn.has('nvim-0.7') == 0 then
  vim.api.nvim_err_writeln('patina.nvim needs Neovim 0.7 or newer')
end
