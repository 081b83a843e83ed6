;;; eglot.el --- Emacs (batch) with eglot and patina-lsp, for tests/editors.rs  -*- lexical-binding: t -*-

;; emacs --batch -Q -l tests/eglot.el PATINA-LSP REPO FILE LINE COLUMN SYMBOL-QUERY OUT
;;
;; Configures eglot as docs/editors.md says (`eglot-server-programs' → patina-lsp), visits FILE
;; of the git repository REPO, starts eglot there, and asks through Emacs's own xref front end:
;; the definitions of the identifier at LINE:COLUMN (`xref-find-definitions', M-.), and the
;; workspace symbols matching SYMBOL-QUERY (`xref-find-apropos', C-M-.). Writes OUT, one line
;; each: `definition FILE:LINE' and `symbol NAME FILE:LINE', then `done'.

(require 'package)
;; Debian's elpa-eglot (Emacs 28 has no built-in eglot; Emacs 29+ has, and this is a no-op).
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'xref)

(let* ((args command-line-args-left)
       (lsp (nth 0 args))
       (repo (file-name-as-directory (nth 1 args)))
       (file (nth 2 args))
       (line (string-to-number (nth 3 args)))
       (column (string-to-number (nth 4 args)))
       (query (nth 5 args))
       (out (nth 6 args))
       (lines '()))
  (setq command-line-args-left nil)
  ;; The snippet of docs/editors.md, with the binary under test.
  (with-eval-after-load 'eglot
    (add-to-list 'eglot-server-programs
                 `((rust-mode rust-ts-mode python-mode python-ts-mode go-mode js-mode typescript-mode)
                   . (,lsp))))
  (setq eglot-sync-connect t
        eglot-connect-timeout 120
        eglot-autoshutdown t
        xref-show-definitions-function #'ignore)
  (find-file (expand-file-name file repo))
  (let ((contact (eglot--guess-contact)))
    (unless (equal (nth 3 contact) (list lsp))
      (error "eglot would start %S, not patina-lsp" (nth 3 contact)))
    (apply #'eglot contact))
  (unless (eglot-current-server)
    (error "eglot did not connect"))
  (message "eglot: connected to %s" (plist-get (eglot--server-info (eglot-current-server)) :name))
  (goto-char (point-min))
  (forward-line (1- line))
  (move-to-column column)
  (let* ((backend (xref-find-backend))
         (id (xref-backend-identifier-at-point backend)))
    (unless (eq backend 'eglot)
      (error "xref's backend is %S, not eglot" backend))
    (dolist (item (xref-backend-definitions backend id))
      (let ((loc (xref-item-location item)))
        (push (format "definition %s:%d" (xref-location-group loc) (xref-location-line loc))
              lines)))
    (dolist (item (xref-backend-apropos backend query))
      (let ((loc (xref-item-location item)))
        (push (format "symbol %s %s:%d" (xref-item-summary item)
                      (xref-location-group loc) (xref-location-line loc))
              lines))))
  (push "done" lines)
  (with-temp-file out
    (insert (mapconcat #'identity (nreverse lines) "\n") "\n"))
  (eglot-shutdown (eglot-current-server)))

;;; eglot.el ends here
