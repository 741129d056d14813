"""Static site generator integrations: the MkDocs plugin and the Sphinx extension.

Both publish the `agentskit-web assets` folder inside the built site and add
the one-line embed to every page, with paths relative to the page. They stand
beside build/ (whose assets code they reuse) and import their generator only
in their own module, so `agentskit_web` never needs MkDocs or Sphinx installed.
"""
